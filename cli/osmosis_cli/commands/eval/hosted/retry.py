"""``osmosis eval retry NAME``: run a hosted run's failed and skipped samples again
(published-cli-0.3.8.md §5.2). When the platform answers that the run's own secrets are
needed (``run_secret_names``), their values are found as a local run finds them —
``--secrets-file``, the environment, a hidden prompt — and the retry is sent again with
them; a local run's retry points at the command that retries it where it ran."""

from __future__ import annotations

from typing import Annotated, Any

import typer

from osmosis_cli.commands.eval.hosted.platform import RunArg, scoped_client
from osmosis_cli.context import state
from osmosis_cli.terminal.commands import runnable
from osmosis_cli.terminal.declare import YesOpt, option
from osmosis_cli.terminal.errors import current_output, handle_errors
from osmosis_client.errors import InvalidInputError


@handle_errors
def retry(
    ctx: typer.Context,
    name: RunArg,
    yes: YesOpt = False,
    secrets_file: Annotated[
        str | None,
        option(
            "--secrets-file FILE",
            "NAME=value lines ('-': stdin) for secrets the run carried itself.",
        ),
    ] = None,
) -> None:
    """Retry a hosted run's failed and skipped samples (or the whole run when there are
    none)."""
    from osmosis_client.errors import APIStatusError

    out = current_output()
    if not out.confirm(f'Retry evaluation run "{name}"?', yes=yes):
        out.cancelled("eval.retry")
        return
    client, _ = scoped_client(state(ctx))
    with client:
        try:
            retried = client.eval_runs.retry(name)
        except APIStatusError as exc:
            values = _needed_secrets(out, exc, secrets_file)
            from osmosis_client.platform.resources.secrets import redacting

            with redacting(values.values()):
                retried = client.eval_runs.retry(name, secrets=values)
    resource: dict[str, Any] = retried.model_dump(mode="json")
    count = retried.retryable_samples
    message = (
        f"Retrying {count} failed and skipped sample(s) in {retried.name}"
        if count
        else f"Retrying {retried.name} from the start"
    )
    steps = [{"action": "eval_info", "name": retried.name}]
    if not out.operation_result("eval.retry", resource=resource, message=message, next_steps=steps):
        out.info(message)
        out.info(f"Follow it with `{runnable('osmosis', 'eval', 'info', retried.name, '--watch')}`")


def _needed_secrets(out: Any, exc: Any, secrets_file: str | None) -> dict[str, str]:
    """The values a retry needs, or ``exc`` again when the platform asked for none."""
    from osmosis_cli.secret_values import local_secrets

    body = exc.body if isinstance(getattr(exc, "body", None), dict) else {}
    local = body.get("local_run")
    if isinstance(local, dict):
        config = local.get("config_path") or "<config>"
        run_name = local.get("eval_run_name") or "<name>"
        raise InvalidInputError(
            "Local evaluation runs are retried on the machine that produced them. Retry it "
            "with:\n  "
            + runnable(
                "osmosis", "eval", "run", config, "--name", run_name, "--retry-failed", "--upload"
            ),
            code="VALIDATION",
            data={"local_run": local},
        ) from None
    names = body.get("run_secret_names")
    if not (isinstance(names, list) and names and all(isinstance(n, str) for n in names)):
        raise exc
    return local_secrets(out, names, secrets_file)
