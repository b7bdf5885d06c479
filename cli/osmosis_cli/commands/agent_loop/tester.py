"""``osmosis test``: run an agent loop (``-m``) or an MCP tool server's tools (``--mcp``)
over a few dataset rows without scoring — 0.2's ``osmosis test``, flags and output
(rollout-protocol.md C); ``-i`` steps through each model call (see ``stepper``)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer

from osmosis_cli.terminal.declare import flag
from osmosis_cli.terminal.errors import EXIT_FAILED, current_output, handle_errors

if TYPE_CHECKING:
    from osmosis_cli.terminal.output import Output
    from osmosis_client.llm.providers import ModelTarget
    from osmosis_local_runner.api.doors import CheckSession, CheckSummary, Row, RowResult

DEFAULT_MODEL = "gpt-5-mini"


@dataclass(kw_only=True)
class TestOptions:
    module: str | None = flag("-m --module --agent MODULE:ATTR", "The RolloutAgentLoop.")
    mcp: Path | None = flag("--mcp DIR", "Instead of -m: the FastMCP server of DIR.")
    dataset: Path = flag("-d --dataset FILE", ".jsonl, .csv or .parquet.")
    model: str = flag(
        "--model MODEL", "provider/model; a bare name is an OpenAI model.", default=DEFAULT_MODEL
    )
    base_url: str | None = flag("--base-url URL", "OpenAI-compatible endpoint.")
    api_key_env: str | None = flag("--api-key-env NAME", "NAME of the env var holding the key.")
    api_key: str | None = flag("--api-key KEY", "The key itself (prefer --api-key-env).")
    limit: int | None = flag("--limit N", "Test N rows.", min=1)
    offset: int = flag("--offset N", "Skip N rows (indices stay).", min=0, default=0)
    max_turns: int = flag("--max-turns N", min=1, default=10)
    max_tokens: int | None = flag("--max-tokens N", min=1)
    temperature: float | None = flag("--temperature T")
    debug: bool = flag("--debug", "ctx.log_event traces to ./test_debug/.", default=False)
    output: Path | None = flag("-o --output FILE", "Write results JSON.")
    quiet: bool = flag("-q --quiet", "Only failures.", default=False)
    interactive: bool = flag("-i --interactive", "Step through each model call.", default=False)
    row: int | None = flag("--row N", "With -i: start with row N.", min=0)
    no_compat: bool = flag("--no-compat", "Do not serve `osmosis_ai` 0.2 imports.", default=False)


@handle_errors
def test(ctx: typer.Context, opts: TestOptions) -> None:
    """Run an agent loop or MCP tools over dataset rows, unscored (0.2's osmosis test).

    Each selected row runs once, in order; a row passes when the loop completes.
    Exit 0 when every row passed, 1 when one failed.
    """
    from osmosis_cli.user_code import check_agent_source
    from osmosis_client.errors import InvalidInputError

    out = current_output()
    check_agent_source(opts.module, opts.mcp)
    if opts.row is not None and not opts.interactive:
        raise InvalidInputError("--row needs --interactive (-i)", code="USAGE")
    if opts.interactive and out.json_mode:
        raise InvalidInputError(
            "--interactive steps through rows at a terminal; it has no --json form",
            hint="drop --json, or -i",
            code="USAGE",
        )
    if opts.api_key is not None:
        out.warn("--api-key puts the key in your shell history: prefer --api-key-env NAME")
    summary = _until_interrupted(_session(out, opts))
    if summary is None:  # interactive
        return
    if opts.output is not None:
        _write(opts.output, summary.document())
        if not opts.quiet:
            out.info(f"Results written to: {opts.output}")
    failed = summary.stopped or summary.passed < len(summary.results)
    resource = summary.document()
    if opts.output is not None:
        resource["output_path"] = str(opts.output)
    out.operation_result(
        "test",
        status="failed" if failed else "success",
        resource=resource,
        message=f"{summary.passed} of {len(summary.results)} rows passed"
        + (" (stopped early)" if summary.stopped else ""),
    )
    if failed:
        raise typer.Exit(EXIT_FAILED)


def _until_interrupted(coro: Any) -> Any:
    """``asyncio.run(coro)``, where Ctrl-C cancels it until the cancellation takes: one
    can be lost (3.11's ``wait_for`` drops it when its inner call ends at that moment),
    and the next row's stuck tool would then hold the process for ever. A second Ctrl-C
    raises ``KeyboardInterrupt`` at once."""
    import asyncio
    import contextlib
    import signal

    async def main() -> Any:
        loop, task = asyncio.get_running_loop(), asyncio.current_task()
        assert task is not None

        def cancel() -> None:
            if not task.done():
                task.cancel()
                loop.call_later(0.2, cancel)

        def on_sigint() -> None:
            loop.remove_signal_handler(signal.SIGINT)  # the next one: KeyboardInterrupt
            cancel()

        with contextlib.suppress(NotImplementedError, RuntimeError):  # not the main thread
            loop.add_signal_handler(signal.SIGINT, on_sigint)
        return await coro

    try:
        return asyncio.run(main())
    except asyncio.CancelledError as exc:
        raise KeyboardInterrupt from exc


async def _session(out: Output, opts: TestOptions) -> CheckSummary | None:
    from osmosis_cli.user_code import prepare_user_imports
    from osmosis_local_runner.api.doors import CheckSession, load_test_rows

    say = (lambda text: None) if opts.quiet else out.info
    mode = " (Interactive Mode)" if opts.interactive else ""
    say(f"osmosis test — osmosis-client {_version()}{mode}\n")
    target = _target(opts)
    say(
        f"Connecting to endpoint: {target.base_url}"
        if opts.base_url
        else f"Initializing provider: {target.provider or target.model_path}"
    )
    say(f"  Model: {target.model}" + (f" ({target.assumed})" if target.assumed else ""))
    sampling = {
        k: v
        for k, v in (("temperature", opts.temperature), ("max_tokens", opts.max_tokens))
        if v is not None
    }
    prepare_user_imports(out, no_compat=opts.no_compat)
    session = CheckSession(target, sampling=sampling)
    try:
        say("Verifying provider connectivity...")
        await session.preflight()
        session.rollout = _load(say, opts, sampling)
        say(f"Loading dataset: {opts.dataset}")
        rows, total = load_test_rows(opts.dataset, opts.limit, opts.offset)
        say(f"  Total rows: {total}" + (f" (testing {len(rows)})" if opts.limit else ""))
        if opts.interactive:
            from osmosis_cli.commands.agent_loop.stepper import step_through

            await step_through(out, session, rows, first=opts.row)
            return None
        return await _run(out, session, rows, quiet=opts.quiet)
    finally:
        await session.aclose()


def _load(say: Any, opts: TestOptions, sampling: dict[str, Any]) -> Any:
    from osmosis_local_runner.api.doors import agent_under_test

    if opts.mcp is not None:
        say(f"Loading MCP tools: {opts.mcp}")
    else:
        say(f"Loading agent: {opts.module}")
    rollout = agent_under_test(
        opts.module,
        opts.mcp,
        max_turns=opts.max_turns,
        completion_params=sampling,
        debug_dir=Path("test_debug") if opts.debug else None,
    )
    names = getattr(rollout.loop, "tool_names", None)
    if isinstance(names, list):
        say(f"  Discovered {len(names)} tool(s): {', '.join(names)}")
    else:
        say(f"  Agent name: {getattr(rollout.loop, 'name', '?')}")
    return rollout


async def _run(out: Output, session: CheckSession, rows: list[Row], *, quiet: bool) -> CheckSummary:
    if not quiet:
        out.info("\nRunning tests...")
    count = len(rows)
    seen = 0

    def shown(result: RowResult) -> None:
        nonlocal seen
        seen += 1
        tokens = result.token_usage.get("total_tokens", 0)
        took = f"{duration(result.duration_ms)}, {tokens:,} tokens"
        if result.success:
            if not quiet:
                out.print(f"[{seen}/{count}] Row {result.row_index}: OK ({took})")
            return
        error = result.error or "failed"
        out.print(f"[{seen}/{count}] Row {result.row_index}: FAILED ({took}) - {_cut(error)}")
        out.line(f"Error running row {result.row_index}: {error}")

    summary = await session.run(rows, shown)
    if not quiet:
        _summary(out, summary)
    return summary


def _summary(out: Output, summary: CheckSummary) -> None:
    total = len(summary.results)
    out.print("\nSummary:")
    out.print(f"  Total: {total}")
    out.print(f"  Passed: {summary.passed}")
    out.print(f"  Failed: {total - summary.passed}")
    out.print(f"  Duration: {duration(summary.duration_ms)}")
    out.print(f"  Total tokens: {summary.tokens:,}")
    if summary.stopped:
        out.print(f"  Stopped early due to systemic provider error. Reason: {summary.stopped}")


def duration(ms: int) -> str:
    """0.2's durations: ``49ms``, ``1.2s``, ``1m3.0s``."""
    if ms < 1000:
        return f"{ms}ms"
    seconds = ms / 1000
    if seconds < 60:
        return f"{seconds:.1f}s"
    minutes, rest = divmod(seconds, 60)
    return f"{int(minutes)}m{rest:.1f}s"


def _cut(text: str, limit: int = 120) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def _target(opts: TestOptions) -> ModelTarget:
    from osmosis_client.llm.providers import resolve_target

    return resolve_target(
        opts.model, base_url=opts.base_url, api_key_env=opts.api_key_env, api_key=opts.api_key
    )


def _write(path: Path, document: dict[str, Any]) -> None:
    import json

    from osmosis_client._fs import atomic_write

    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write(path, (json.dumps(document, indent=2) + "\n").encode())


def _version() -> str:
    from osmosis_client._version import __version__

    return __version__
