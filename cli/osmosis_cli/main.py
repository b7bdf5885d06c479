"""``osmosis``: the typer app, global options and the entry point.

Start-up imports only typer's core and our light modules; everything heavy
(httpx, pydantic, keyring, rich, aiohttp) is imported inside the commands that
use it. The root options that take a value (``--platform``, ``--workspace``,
``--env-file``) and ``--json`` / ``--plain`` are read by :mod:`osmosis_cli.globals`
before typer parses: typer coerces every non-flag option through pydantic, which
``--help`` and usage errors should not pay for.
"""

from __future__ import annotations

import json
import sys
from typing import TYPE_CHECKING, Annotated, Any

import typer

from osmosis_cli import globals as globals_
from osmosis_cli.context import AppState
from osmosis_cli.terminal.declare import Group, option
from osmosis_cli.terminal.errors import EXIT_INTERRUPTED, EXIT_INVALID
from osmosis_cli.terminal.lazy import make_lazy, table
from osmosis_client._version import __version__

if TYPE_CHECKING:
    from osmosis_client.errors import OsmosisError

app = typer.Typer(
    name="osmosis",
    cls=Group,
    help="Osmosis: log in, submit and follow hosted eval runs, and run evals locally.",
    epilog=(
        "Global options: --json or --plain (anywhere on the line) print results for "
        "programs; before COMMAND: --platform URL (alias --platform-url; default "
        "$OSMOSIS_PLATFORM_URL or https://platform.osmosis.ai), --workspace NAME (this "
        "invocation's workspace), --env-file PATH (default: the nearest .env up to the "
        "top of the git checkout)."
    ),
    no_args_is_help=True,
    rich_markup_mode=None,
    pretty_exceptions_enable=False,
    add_completion=False,
    context_settings={"help_option_names": ["-h", "--help"]},
)


def _version(value: bool) -> None:
    if value:
        sys.stdout.write(f"osmosis-client {__version__}\n")
        sys.stdout.flush()
        raise typer.Exit(0)


@app.callback()
def root(
    ctx: typer.Context,
    verbose: Annotated[  # counted by osmosis_cli.globals before typer parses (-v, -vv)
        bool,
        option(
            "-v --verbose",
            "More: the failing rows and why, retries, tracebacks (-vv: every model call).",
        ),
    ] = False,
    version: Annotated[
        bool,
        option("-V --version", "Print the version and exit.", callback=_version, is_eager=True),
    ] = False,
) -> None:
    if not isinstance(ctx.obj, AppState):
        ctx.obj = AppState()
    ctx.obj.verbose = max(ctx.obj.verbose, int(verbose))


EVAL = table("""
# Run locally (no login needed)
[osmosis_cli.commands.eval.local.commands]
run: Run an eval config or suite offline against a model endpoint.
seed: The seed form: osmosis eval -m MODULE:ATTR -d DATASET ...
watch: Evaluate a training's checkpoints as they land, as one series.
init: Scaffold a runnable evaluation (config, rollout, data, model).
# Look at results
[osmosis_cli.commands.eval.results.commands]
compare: Compare two runs row by row (paired difference, flips, pass@k).
report: Write one self-contained HTML report of one run or several.
rescore: Re-grade a run's saved transcripts with new eval fns.
view: Browse this project's runs in a local, live viewer.
schema: The JSON Schema of the results document and a run directory.
push: Send a local run to experiment trackers (MLflow, W&B, Trackio).
agreement: How far a run's grader agrees with people's reviews (κ).
plan: How many rows a comparison needs to detect a difference.
[osmosis_cli.commands.rubric:register_eval]
rubric: Score every solution in a JSONL file with a judge and a rubric.
# Run on the platform
[osmosis_cli.commands.eval.hosted.commands]
submit: Submit a hosted eval run pinned to your pushed commit.
list: Recent eval runs of the workspace.
info: Details and results of one run.
logs: A hosted run's logs (--follow tails them until it ends).
stop: Stop a pending or running run.
download: Download a hosted run's outputs, resuming what is missing.
retry: Retry a hosted run's failed and skipped samples.
upload: Upload a finished local run to the platform.
""")
LOGIN = table("""
[osmosis_cli.commands.auth:register]
login: Log in (device code, or a token on stdin); pick a workspace.
logout: Remove stored credentials (and revoke tokens no longer used).
whoami: Show the logged-in user, workspace and the token's source.
""")
#: every command, in the order ``osmosis --help`` lists them, under what people come for
#: first; a command's module is imported only when the command runs or shows its help
ROOT = table(
    """
# Evaluate
[osmosis_cli.commands.eval:register]
eval: Run evals locally or on the platform; compare their results.
[osmosis_cli.commands.cache:register]
cache: The local model-call cache: stats, explain, prune, clear.
# Data and secrets
[osmosis_cli.commands.dataset:register]
dataset: Validate, upload and manage the platform's datasets.
[osmosis_cli.commands.secret:register]
secret: Secrets stored on the platform for your configs' [secrets].
# Train and serve
[osmosis_cli.commands.train:register]
train: Training runs on the platform: submit, list, info, logs, stop.
[osmosis_cli.commands.model:register]
model: Base models, LoRA models and their deployments.
[osmosis_cli.commands.benchmark:register]
benchmark: Benchmarks and their runs: list, info, submit, stop, download.
# Workspace and login
[osmosis_cli.commands.auth:register]
login: Log in (device code, or a token on stdin); pick a workspace.
logout: Remove stored credentials (and revoke tokens no longer used).
whoami: Show the logged-in user, workspace and the token's source.
auth: Log in, log out, and show who you are (also: osmosis login).
[osmosis_cli.commands.workspace:register]
workspace: List, show and switch workspaces.
# Set up a workspace
[osmosis_cli.commands.quickstart:register]
quickstart: The steps to a first run: what is done, what to run next.
[osmosis_cli.commands.doctor:register]
doctor: Check this workspace: folders, git, login, configs, endpoints.
[osmosis_cli.commands.template:register]
template: List and apply rollout templates.
[osmosis_cli.commands.rollout:register]
rollout: Create, list and check rollouts.
[osmosis_cli.commands.upgrade:register]
upgrade: Upgrade osmosis-client with the installer that installed it.
# Commands of the 0.2 SDK (agent loops, rubrics)
[osmosis_cli.commands.agent_loop:register]
serve: Serve an agent loop for training (0.2's rollout server).
validate: Check an agent loop without running it.
test: Run an agent loop or MCP tools over rows, unscored.
[osmosis_cli.commands.rubric:register]
eval-rubric: Evaluate a JSONL dataset against a rubric config.
preview: Validate and pretty-print a rubric config or a JSONL dataset.
""",
    auth=LOGIN,
    eval=EVAL,
)


def command() -> Any:
    """The root click group; its commands are built on first look-up."""
    return make_lazy(typer.main.get_command(app), ROOT)


def _is_click_exception(exc: BaseException) -> bool:
    return hasattr(exc, "exit_code") and hasattr(exc, "format_message")


def _usage_error(exc: BaseException, state: AppState | None) -> int:
    """One ``error:`` line (or the ``--json`` error envelope) for a usage error."""
    if type(exc).__name__ == "NoArgsIsHelpError":  # bare `osmosis eval`: show the help
        sys.stderr.write(exc.format_message() + "\n")  # type: ignore[attr-defined]
        return EXIT_INVALID
    message = exc.format_message()  # type: ignore[attr-defined]
    command = getattr(getattr(exc, "ctx", None), "command_path", None) or "osmosis"
    hint = f"see `{command} --help`"
    if state is not None and state.output == "json":
        from osmosis_cli.terminal.envelope import usage_error_document

        document = usage_error_document(command, message, hint)
        sys.stderr.write(json.dumps(document, ensure_ascii=False) + "\n")
    else:
        sys.stderr.write(f"error: {message} — {hint}\n")
    sys.stderr.flush()
    code = getattr(exc, "exit_code", EXIT_INVALID)
    return code if isinstance(code, int) and code else EXIT_INVALID


def _failure(exc: OsmosisError, state: AppState | None) -> int:
    """An error before any command ran (the environment file): one line, its exit code."""
    from osmosis_cli.terminal.errors import exit_code_for
    from osmosis_cli.terminal.output import Output

    Output(json_mode=state is not None and state.output == "json").error(exc)
    return exit_code_for(exc)


def main(argv: list[str] | None = None) -> Any:
    """Console-script entry point: usage errors become one ``error:`` line and exit 2."""
    try:
        _main(argv)
    finally:
        if argv is None:  # the console script: this process ends now
            # its objects die with it: freezing them skips the collector's last passes
            # over everything on the way out (~45 ms after a 2,000-row run: bench/)
            import gc

            gc.freeze()


def _main(argv: list[str] | None) -> Any:
    from osmosis_client.errors import OsmosisError

    args = list(sys.argv[1:] if argv is None else argv)
    state: AppState | None = None
    try:
        rest, state, env_file = globals_.parse(args)
        state.argv = args
        globals_.load_env_file(env_file)
        code = command().main(args=rest, obj=state, prog_name="osmosis", standalone_mode=False)
    except KeyboardInterrupt:
        sys.stderr.write("interrupted\n")
        sys.exit(EXIT_INTERRUPTED)
    except OsmosisError as exc:
        sys.exit(_failure(exc, state))
    except Exception as exc:
        if type(exc).__name__ == "Abort":  # Ctrl-C / EOF at a prompt
            sys.stderr.write("aborted\n")
            sys.exit(EXIT_INTERRUPTED)
        if not _is_click_exception(exc):
            if state is not None and state.verbose:
                raise
            internal = OsmosisError(
                f"internal error ({type(exc).__name__}: {exc})",
                hint="rerun with -v and report it",
                code="INTERNAL",
            )
            sys.exit(_failure(internal, state))
        sys.exit(_usage_error(exc, state))
    sys.exit(code if isinstance(code, int) else 0)


if __name__ == "__main__":  # pragma: no cover
    main()
