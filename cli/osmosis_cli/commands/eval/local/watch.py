"""``osmosis eval watch CONFIG --checkpoints DIR``: a training's checkpoints evaluated as
they land, one series — the library's ``watch_checkpoints``; this face parses the options,
says what the watch is doing, line by line, and renders what it did."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

import typer

from osmosis_cli.commands.eval.local.options import LocalRunOptions
from osmosis_cli.terminal.declare import arg, flag
from osmosis_cli.terminal.errors import current_output, handle_errors

if TYPE_CHECKING:
    from osmosis_cli.terminal.output import Output
    from osmosis_local_runner import WatchEvent

WATCH = "Watching checkpoints"
#: the watch's own options (the rest are a run's)
WATCHING = (
    "checkpoints",
    "training",
    "deploy",
    "serve_cmd",
    "keep_loaded",
    "once",
    "until",
    "poll",
    "marker",
    "serve_timeout",
)


@dataclass(kw_only=True)
class WatchOptions(LocalRunOptions):
    PANELS: ClassVar[dict[str, str]] = {
        **LocalRunOptions.PANELS,
        **dict.fromkeys(WATCHING, WATCH),
    }
    config_path: Path = arg(metavar="CONFIG", help="configs/eval/NAME.toml", show_default=False)
    checkpoints: Path | None = flag(
        "--checkpoints DIR",
        "The folder the trainer saves checkpoints into (step_N, step-N, "
        "checkpoint-N, global_step_N).",
    )
    training: str | None = flag(
        "--training RUN",
        "A platform training run: its uploaded checkpoints, evaluated against the "
        "platform's inference endpoint (OSMOSIS_INFERENCE_URL, OSMOSIS_API_KEY).",
    )
    deploy: bool = flag(
        "--deploy",
        "With --training: deploy each checkpoint that is not (it uses the "
        "workspace's inference quota) and undeploy it after its run.",
        default=False,
    )
    serve_cmd: str | None = flag(
        "--serve-cmd CMD",
        "Serve each checkpoint with this command ({path} and {step} filled in), "
        "waited on until the endpoint answers; else it is loaded into vLLM as a LoRA.",
    )
    keep_loaded: bool = flag(
        "--keep-loaded", "Leave each LoRA loaded after its run.", default=False
    )
    once: bool = flag("--once", "Evaluate the checkpoints there now, then exit.", default=False)
    until: int | None = flag("--until STEP", "Stop once this step is evaluated.", min=0)
    poll: float = flag("--poll SECONDS", "How often to look for more.", min=0.1, default=10.0)
    marker: str | None = flag(
        "--marker FILE",
        "A file the trainer writes last in a checkpoint (default: STABLE, else "
        "every size unchanged across two looks).",
    )
    serve_timeout: float = flag(
        "--serve-timeout SECONDS",
        "How long a serve command may take to answer.",
        min=1.0,
        default=600.0,
    )

    PRESENTATION: ClassVar[frozenset[str]] = LocalRunOptions.PRESENTATION | {
        "config_path",
        *WATCHING,
    }


@handle_errors
def watch(ctx: typer.Context, opts: WatchOptions) -> None:
    """Evaluate a training's checkpoints as they land, as one series: each complete
    checkpoint is served (a vLLM runtime LoRA, or --serve-cmd), evaluated once as the run
    SERIES-step-N (its step and weights recorded), then released. A restarted watch skips
    what finished; a step that fails is recorded and the watch goes on."""
    from osmosis_client.errors import InvalidInputError
    from osmosis_local_runner import watch_checkpoints

    out = current_output()
    _refuse_run_only(opts)
    given = opts.run_settings().given()
    for key in ("series", "step"):  # the watch's own
        given.pop(key, None)
    common = {
        "series": opts.series,
        "once": opts.once,
        "until": opts.until,
        "poll": opts.poll,
        "on_event": _Lines(out),
        "log_to": opts.log_to,
        **given,
    }
    if (opts.checkpoints is None) == (opts.training is None):
        raise InvalidInputError(
            "watch --checkpoints DIR or --training RUN (one of them)", code="USAGE"
        )
    if opts.training is not None:
        from osmosis_cli.context import state
        from osmosis_local_runner import watch_training

        client, _ = state(ctx).scoped_client()
        with client:
            found = watch_training(
                opts.config_path, opts.training, client=client, deploy=opts.deploy, **common
            )
    else:
        assert opts.checkpoints is not None
        found = watch_checkpoints(
            opts.config_path,
            opts.checkpoints,
            serve_cmd=opts.serve_cmd,
            keep_loaded=opts.keep_loaded,
            marker=opts.marker,
            serve_timeout=opts.serve_timeout,
            **common,
        )
    message = f"{found.series}: {len(found.finished)} step(s) evaluated, {len(found.failed)} failed"
    if not out.operation_result("eval.watch", resource=found.to_json(), message=message):
        out.info(message)
    if found.failed:
        raise typer.Exit(1)


def _refuse_run_only(opts: WatchOptions) -> None:
    """The flags of a single run that a watch has no use for: refused, not ignored."""
    from osmosis_client.errors import InvalidInputError

    asked = (
        ("-o", opts.output),
        ("--resume", opts.resume),
        ("--junit", opts.junit),
        ("--max-error-rate", opts.max_error_rate),
    )
    ignored = [flag for flag, value in asked if value]
    if ignored:
        raise InvalidInputError(
            f"{ignored[0]} does not go with eval watch: it names its own runs (SERIES-step-N) "
            "and continues a half-done one by itself",
            hint="leave it out",
            code="USAGE",
        )


class _Lines:
    """The watch's events as lines on stderr (a waiting line once per wait)."""

    def __init__(self, out: Output) -> None:
        self.out = out
        self.waiting = False

    def __call__(self, event: WatchEvent) -> None:
        if event.kind == "waiting":
            if not self.waiting:
                self.out.info(f"Waiting {event.message}")
            self.waiting = True
            return
        self.waiting = False
        said: dict[str, Any] = {
            "incomplete": f"step {event.step}: not complete yet ({event.message})",
            "skipped": f"step {event.step}: {event.run} finished before",
            "serving": f"step {event.step}: serving {event.message}",
            "evaluating": f"step {event.step}: evaluating as {event.run}",
            "finished": f"step {event.step}: {event.run} finished (mean {event.message})",
            "failed": f"step {event.step}: failed — {event.message}",
        }
        line = said[event.kind]
        if event.kind == "failed":
            self.out.warn(line, code="STEP_FAILED")
        else:
            self.out.info(line)
