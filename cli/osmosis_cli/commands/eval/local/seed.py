"""The seed form: ``osmosis eval -m MODULE:ATTR -d DATASET --model M --eval-fn MODULE:FN``
(registered as ``osmosis eval seed``) — the published 0.2 ``osmosis eval`` command."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

import typer

from osmosis_cli.commands.eval.local.execute import execute
from osmosis_cli.commands.eval.local.failures import rerun_commands
from osmosis_cli.commands.eval.local.options import LocalRunOptions, NoCompatOpt, RowsOpt
from osmosis_cli.terminal.declare import arg, flag
from osmosis_cli.terminal.errors import current_output, handle_errors
from osmosis_client.errors import InvalidInputError

if TYPE_CHECKING:
    from osmosis_local_runner.api.doors import RunRequest


@dataclass(kw_only=True)
class SeedOptions(LocalRunOptions):
    module: str | None = flag("-m --module MODULE:ATTR", "An AgentWorkflow or a RolloutAgentLoop.")
    mcp: Path | None = flag(
        "--mcp DIR", "Instead of -m: the FastMCP tool server of DIR/main.py as the agent's tools."
    )
    dataset: Path | None = flag("-d --dataset FILE", "Dataset file.")
    eval_fn: list[str] | None = flag("--eval-fn MODULE:FN", "An eval function (repeatable).")
    api_key: str | None = flag(
        "--api-key KEY", "The key itself (visible to other users in argv: prefer --api-key-env)."
    )
    offset: int = flag("--offset N", "Skip the first N rows (indices stay).", min=0, default=0)
    max_turns: int | None = flag("--max-turns N", "Agent loops: turns (default 10).", min=1)
    max_tokens: int | None = flag("--max-tokens N", "Tokens per model answer.", min=1)
    baseline_model: str | None = flag(
        "--baseline-model MODEL", "Also run every item on this model."
    )
    baseline_base_url: str | None = flag("--baseline-base-url URL", "The baseline's endpoint.")
    baseline_api_key_env: str | None = flag(
        "--baseline-api-key-env NAME", "NAME of the baseline's key variable."
    )
    baseline_api_key: str | None = flag(
        "--baseline-api-key KEY",
        "The baseline's key itself (0.2's flag; prefer --baseline-api-key-env).",
    )
    debug: bool = flag(
        "--debug", "Agent loops: ctx.log_event traces to ./local_debug/.", default=False
    )
    rows_spec: RowsOpt = None
    retry_failed: bool = flag(
        "--retry-failed",
        "Continue the run at -o, running its errored attempts again.",
        default=False,
    )
    no_compat: NoCompatOpt = False
    stray: list[str] | None = arg(hidden=True, metavar="", default=None)

    RENAMED: ClassVar[dict[str, str]] = {
        **LocalRunOptions.RENAMED,
        "debug": "debug_dir",
        "rows_spec": "rows",
    }
    PRESENTATION: ClassVar[frozenset[str]] = LocalRunOptions.PRESENTATION | {
        "module",
        "mcp",
        "eval_fn",
        "retry_failed",
        "no_compat",
        "stray",
    }

    def renamed_settings(self) -> dict[str, Any]:
        """``--debug``: the agent loop's ``ctx.log_event`` traces in ``./local_debug/``;
        ``--rows``: these source rows."""
        from osmosis_local_runner.api.doors import parse_rows

        found: dict[str, Any] = {"debug_dir": Path("local_debug")} if self.debug else {}
        if self.rows_spec is not None:
            found["rows"] = parse_rows(self.rows_spec)
        return found

    def request(self, **more: Any) -> RunRequest:
        """What this invocation asks the runner for: one results document (``-o``, else a
        new one under ``.osmosis/evals``, as 0.2 wrote them)."""
        from osmosis_local_runner.api.doors import RunRequest, SeedSource, unnamed_results

        resuming = self.resume or self.retry_failed
        output = self.output
        if output is None:
            if resuming:
                raise InvalidInputError(
                    "--resume needs -o PATH", hint="pass the -o of the run to continue"
                )
            assert self.dataset is not None
            output = unnamed_results(self.dataset.stem)
        source = SeedSource(module=self.module, mcp=self.mcp, eval_fns=list(self.eval_fn or []))
        return RunRequest(
            settings=self.run_settings(),
            seed=source,
            output=output,
            resume=self.resume,
            retry_failed=self.retry_failed,
            **self.sharing(),
            **more,
        )


@handle_errors
def seed(ctx: typer.Context, opts: SeedOptions) -> None:
    """The seed form: osmosis eval -m MODULE:ATTR -d DATASET --model M --eval-fn MODULE:FN.

    Runs an AgentWorkflow, a 0.2 RolloutAgentLoop or (--mcp DIR) a FastMCP tool server's
    tools over every row of a dataset (unless --limit) and scores each attempt with the
    eval functions.
    """
    from osmosis_cli.user_code import prepare_user_imports

    out = current_output()
    _refuse_stray(ctx, opts.stray)
    if not ((opts.resume or opts.retry_failed) and opts.output is not None):
        _check_given(opts)  # a continued run takes what is missing from its journal
    for given, value in (
        ("--api-key", opts.api_key),
        ("--baseline-api-key", opts.baseline_api_key),
    ):
        if value is not None:
            out.warn(
                f"{given} puts the key in your shell history and the process list: "
                f"prefer {given}-env NAME"
            )
    for given, value in (
        ("--baseline-api-key", opts.baseline_api_key),
        ("--baseline-base-url", opts.baseline_base_url),
    ):
        if value is not None and not opts.baseline_model:
            raise InvalidInputError(f"{given} needs --baseline-model", code="USAGE")
    from osmosis_cli.commands.eval.local.run import platform_prices

    request = opts.request(price_source=platform_prices(ctx))
    prepare_user_imports(out, no_compat=opts.no_compat)
    execute(request, out, opts, lambda session: rerun_commands(out, session.results))


def _check_given(opts: SeedOptions) -> None:
    """``-m`` (or ``--mcp``), ``-d``, ``--model`` and ``--eval-fn``, in 0.2's words."""
    from osmosis_cli.user_code import check_agent_source

    given = {"-d": opts.dataset, "--model": opts.model, "--eval-fn": opts.eval_fn}
    missing = [flag for flag, value in given.items() if not value]
    if missing and not opts.module and opts.mcp is None:
        missing.insert(0, "-m")
    if missing:
        raise InvalidInputError(
            f"missing {', '.join(missing)}",
            hint="osmosis eval -m MODULE:ATTR -d DATASET --model M --eval-fn MODULE:FN",
        )
    check_agent_source(opts.module, opts.mcp)


def _refuse_stray(ctx: typer.Context, stray: list[str] | None) -> None:
    """``osmosis eval --limit 2 run CONFIG``: options go after the subcommand."""
    if not stray:
        return
    from osmosis_client.errors import InvalidInputError

    group = ctx.parent
    commands = set(group.command.list_commands(group)) if group is not None else set()  # type: ignore[attr-defined]
    if stray[0] in commands:
        raise InvalidInputError(
            f"options before the subcommand {stray[0]!r} are not allowed",
            hint=f"put them after it: osmosis eval {stray[0]} … --option",
            code="USAGE",
        )
    raise InvalidInputError(
        f"unexpected argument {stray[0]!r}",
        hint="the seed form takes only options; see `osmosis eval seed --help`",
        code="USAGE",
    )
