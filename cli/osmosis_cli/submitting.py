"""What every submit command shares (``eval submit``, ``train submit``, ``benchmark
submit``): the options of a submit pinned to a commit and their rules, and its end — the
config's secrets resolved, the summary, the question, the send. What is pinned and sent
is the SDK's (``osmosis_client.platform.submission`` and its siblings); this is how a
terminal asks for it."""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeVar

from osmosis_cli.secret_values import SecretsFileOpt, for_submit, scope_label
from osmosis_cli.terminal.declare import YesOpt, flag

if TYPE_CHECKING:
    from osmosis_cli.context import AppState
    from osmosis_cli.terminal.output import Output
    from osmosis_client import Client
    from osmosis_client.platform.eval_model import Experiment
    from osmosis_client.platform.git import Pin
    from osmosis_client.platform.submission import PinRules

T = TypeVar("T")


@dataclass(kw_only=True)
class PinnedSubmit:
    """The options of a submit pinned to this checkout's commit."""

    yes: YesOpt = False
    allow_dirty: bool = flag(
        "--allow-dirty", "Submit even with uncommitted rollout changes.", default=False
    )
    allow_unpushed: bool = flag(
        "--allow-unpushed", "Submit a HEAD no remote branch contains.", default=False
    )
    secrets_file: SecretsFileOpt = None

    def rules(self) -> PinRules:
        from osmosis_client.platform.submission import PinRules

        return PinRules(
            unattended=self.yes, allow_dirty=self.allow_dirty, allow_unpushed=self.allow_unpushed
        )


def refuse_unconfirmed(out: Output, yes: bool) -> None:
    """No terminal and no ``--yes``: refused before anything is read or sent (a submit
    would stop at its question; it never hangs)."""
    if not yes and not out.interactive:
        from osmosis_cli.terminal.output import ConfirmationRequired

        raise ConfirmationRequired(
            "submitting needs confirmation but stdin is not a terminal",
            hint="pass --yes to submit non-interactively",
        )


@contextlib.contextmanager
def pinned_scope(
    app_state: AppState, out: Output, plan: Any
) -> Iterator[tuple[Client, str | None, str]]:
    """A pinned plan's warnings said, then its workspace's client (closed after), the
    workspace, and where the run goes (this checkout's repository is the one connected
    to it: the SDK's ``check_scope``)."""
    from osmosis_client.platform.submission import check_scope

    for warning in plan.warnings:
        out.warn(warning)
    client, workspace = app_state.scoped_client(plan.repo)
    with client:
        yield client, workspace, check_scope(client, plan.repo.origin_repo)


def confirm_and_send(
    out: Output,
    client: Client,
    *,
    names: Sequence[str],
    secrets_file: str | None,
    yes: bool,
    summary: Callable[[], None],
    question: str,
    operation: str,
    send: Callable[[dict[str, str]], T],
    before: Callable[[Mapping[str, str]], None] | None = None,
    each_secret: bool = True,
) -> T | None:
    """The end of every submit: the config's secrets resolved (refused before anything
    is sent when one is missing), the plan's summary with how each secret reaches the
    platform (``each_secret``), the question, then ``send(values)`` — None when the
    answer is no. ``before(stored)``: a last check that needs the stored scopes."""
    found, stored = for_submit(client, out, names, secrets_file)
    if before is not None:
        before(stored)
    summary()
    for name in names if each_secret else ():
        out.info(f"  secret {name}: {scope_label(found, stored, name)}")
    if not out.confirm(question, yes=yes):
        out.cancelled(operation)
        return None
    return send(found.provided)


def report_submitted(
    out: Output,
    operation: str,
    *,
    resource: dict[str, Any],
    message: str,
    steps: list[dict[str, Any]],
    url: str | None,
    lines: Sequence[str],
) -> None:
    """A created run: the operation envelope (``--json``: nothing more), else the message,
    then (``--plain`` too) its ``lines`` and where to see it (``url``: opened last)."""
    if url:
        steps = [*steps, {"action": "open_url", "url": url}]
    if out.operation_result(operation, resource=resource, message=message, next_steps=steps):
        if out.json_mode:
            return
    else:
        out.print(message)
    for line in lines:
        out.print(line)
    if url:
        out.print(f"View: {url}")


__all__ = [
    "PinnedSubmit",
    "confirm_and_send",
    "pinned_scope",
    "refuse_unconfirmed",
    "report_submitted",
]


def config_keys(experiment: Experiment, pin: Pin) -> dict[str, Any]:
    """The published ``resource.config`` of a source-pinned submit (eval or training)."""
    return {
        "rollout": experiment.rollout,
        "entrypoint": experiment.entrypoint,
        "model": experiment.model_path,
        "dataset": experiment.dataset,
        "branch": pin.branch,
        "commit_sha": pin.commit_sha,
    }
