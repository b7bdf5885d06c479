"""A training's checkpoints watched as they land and evaluated as one series
(``osmosis eval watch CONFIG --checkpoints DIR``): each complete checkpoint, in step
order, is made the served model (vLLM's runtime LoRA, or a serve command of the user's),
evaluated once as the run ``SERIES-step-N`` of the series — its step, and which weights
answered, recorded with it — then released. A restarted watch skips the steps finished
before and continues a half-done one (each attempt still runs once); a step that fails is
recorded and the watch goes on. ``on_event`` is told what it is doing at each moment.

The loop waits with ``sleep`` (injectable: tests never sleep), polling every ``poll``
seconds until ``until`` is evaluated — or, ``once``, after what is there."""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Literal

from osmosis_client._fs import atomic_write
from osmosis_client.errors import InvalidInputError, OsmosisError
from osmosis_client.layout import EVALS, STATE
from osmosis_local_runner.api.blocking import run_blocking
from osmosis_local_runner.run.session.rundir import RunDirectory
from osmosis_local_runner.run.watch.checkpoints import Checkpoint, Readiness, find_checkpoints
from osmosis_local_runner.run.watch.serving import CommandServing, LoraServing, Sleep

#: where a watch keeps what became of each step (and a serve command's logs)
WATCHES = STATE / "watches"
Kind = Literal["waiting", "incomplete", "skipped", "serving", "evaluating", "finished", "failed"]


@dataclass(frozen=True)
class WatchEvent:
    """What the watch is doing: waiting for checkpoints, a step not complete yet, one
    skipped (finished before), served, evaluated, finished or failed."""

    kind: Kind
    step: int | None = None
    run: str | None = None
    message: str = ""


@dataclass
class WatchResult:
    """What the watch did: each step's run, finished or failed (with why)."""

    series: str
    finished: dict[int, str] = field(default_factory=dict)
    failed: dict[int, str] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class _Watch:
    config: Path
    folder: Path
    series: str
    root: Path
    serving: LoraServing | CommandServing
    options: dict[str, Any]
    on_event: Callable[[WatchEvent], None]
    result: WatchResult

    def say(
        self, kind: Kind, step: int | None = None, run: str | None = None, text: str = ""
    ) -> None:
        self.on_event(WatchEvent(kind, step, run, text))

    def state(self, name: str) -> str:
        return RunDirectory(self.root / EVALS, name).state()

    async def evaluate(self, checkpoint: Checkpoint, continued: bool) -> None:
        from osmosis_local_runner.api.running import arun_eval

        name = f"{self.series}-step-{checkpoint.step}"
        self.say("serving", checkpoint.step, name, str(checkpoint.path))
        try:
            weights = await self.serving.serve(checkpoint, name)
            try:
                model = name if isinstance(self.serving, LoraServing) else self.options["model"]
                self.say("evaluating", checkpoint.step, name)
                done = await arun_eval(
                    self.config,
                    **{**self.options, "model": model},
                    name=name,
                    series=self.series,
                    step=checkpoint.step,
                    weights=weights,
                    resume=continued,
                    root=self.root,
                )
            finally:
                await self.serving.release(name)
        except OsmosisError as exc:  # this step failed: said and kept, the watch goes on
            self.result.failed[checkpoint.step] = exc.message
            self.say("failed", checkpoint.step, name, exc.message)
        else:
            self.result.finished[checkpoint.step] = name
            mean = done.summary.mean
            self.say("finished", checkpoint.step, name, "" if mean is None else f"{mean:.3f}")
        self.keep()

    def keep(self) -> None:
        """What became of each step, beside the project's runs."""
        path = self.root / WATCHES / f"{self.series}.json"
        record = {"series": self.series, "checkpoints": str(self.folder), **self.result.to_json()}
        path.parent.mkdir(parents=True, exist_ok=True)
        atomic_write(path, (json.dumps(record, indent=2) + "\n").encode())


async def _look(watch: Any, readiness: Readiness, handled: set[int], until: int | None) -> bool:
    """One look at the folder: each complete checkpoint not handled yet evaluated, in step
    order. True when a checkpoint was seen for the first time still being written (a
    second look may find it complete)."""
    for checkpoint in find_checkpoints(watch.folder):
        step = checkpoint.step
        if step in handled or (until is not None and step > until):
            continue
        name = f"{watch.series}-step-{step}"
        state = watch.state(name)
        if state == "finished":  # evaluated before (a restarted watch)
            handled.add(step)
            watch.result.finished[step] = name
            watch.say("skipped", step, name, "finished before")
            continue
        seen = readiness.looked_once(checkpoint)
        if not readiness.ready(checkpoint):
            watch.say("incomplete", step, name, "still being written")
            return not seen  # a later step waits for this one: step order
        await watch.evaluate(checkpoint, continued=state == "unfinished")
        handled.add(step)
    return False


async def awatch_checkpoints(
    config: str | Path,
    checkpoints: str | Path,
    *,
    series: str | None = None,
    serve_cmd: str | None = None,
    keep_loaded: bool = False,
    once: bool = False,
    until: int | None = None,
    poll: float = 10.0,
    marker: str | None = None,
    serve_timeout: float = 600.0,
    on_event: Callable[[WatchEvent], None] | None = None,
    sleep: Sleep = asyncio.sleep,
    root: str | Path | None = None,
    **options: Any,
) -> WatchResult:
    """Watch ``checkpoints`` (a folder the trainer saves into) and evaluate each complete
    checkpoint with ``config`` as one run of the series (see the module). ``options``:
    ``run_eval``'s keywords (``model`` — the base model a LoRA is loaded onto, or the name
    a serve command serves —, ``base_url``, ``limit``, ``n``, ``log_to``…)."""
    watch = _prepare(
        Path(config),
        Path(checkpoints),
        series,
        serve_cmd,
        keep_loaded,
        serve_timeout,
        sleep,
        root,
        options,
    )
    watch.on_event = on_event or (lambda event: None)
    readiness, handled = Readiness(marker), set[int]()
    while True:
        first_look = await _look(watch, readiness, handled, until)
        if until is not None and any(s >= until for s in handled):
            break
        if once and not first_look:
            break  # what was there is done (a checkpoint still being written is left)
        watch.say("waiting", text=f"for checkpoints in {watch.folder}")
        await sleep(poll)
    return watch.result


async def aevaluate_checkpoint(
    config: str | Path,
    checkpoint: str | Path,
    step: int,
    *,
    series: str | None = None,
    serve_cmd: str | None = None,
    keep_loaded: bool = False,
    serve_timeout: float = 600.0,
    root: str | Path | None = None,
    **options: Any,
) -> WatchResult:
    """One checkpoint folder served and evaluated as step ``step`` of ``series`` (default:
    its parent folder's name) — what a trainer's hook calls after each save; a step
    finished before is not evaluated again, a half-done one continues."""
    path = Path(checkpoint)
    watch = _prepare(
        Path(config),
        path.parent,
        series,
        serve_cmd,
        keep_loaded,
        serve_timeout,
        asyncio.sleep,
        root,
        options,
    )
    name = f"{watch.series}-step-{step}"
    state = watch.state(name)
    if state == "finished":
        watch.result.finished[step] = name
    else:
        await watch.evaluate(Checkpoint(step, path), continued=state == "unfinished")
    return watch.result


def watch_checkpoints(config: str | Path, checkpoints: str | Path, **options: Any) -> WatchResult:
    """:func:`awatch_checkpoints` from synchronous code (a script, a notebook cell)."""
    return run_blocking(lambda: awatch_checkpoints(config, checkpoints, **options))


def _prepare(
    config: Path,
    folder: Path,
    series: str | None,
    serve_cmd: str | None,
    keep_loaded: bool,
    serve_timeout: float,
    sleep: Sleep,
    root: str | Path | None,
    options: dict[str, Any],
) -> _Watch:
    """The watch's parts, every input checked before anything is served."""
    from osmosis_client.platform.eval.eval_config import load_config
    from osmosis_local_runner.run.request.settings import check_series

    if not folder.is_dir():
        raise InvalidInputError(f"{folder} is not a folder of checkpoints", code="USAGE")
    loaded = load_config(config)
    chosen = check_series(series or _series_of(folder))
    project = Path(root) if root is not None else (loaded.root or Path.cwd())
    base_url = options.get("base_url") or loaded.local.base_url
    model = options.get("model") or loaded.experiment.model_path
    if not base_url:
        raise InvalidInputError(
            "a watch serves each checkpoint on an endpoint: name its base URL",
            hint="give base_url (vLLM's, e.g. http://localhost:8000/v1)",
            code="USAGE",
        )
    headers = _auth(options)
    serving: LoraServing | CommandServing = LoraServing(base_url, headers, keep_loaded)
    if serve_cmd:
        logs = project / WATCHES / chosen
        serving = CommandServing(
            serve_cmd,
            base_url,
            model,
            headers=headers,
            timeout=serve_timeout,
            logs=logs,
            sleep=sleep,
        )
    options = {**options, "base_url": base_url, "model": model}
    return _Watch(
        config, folder, chosen, project, serving, options, lambda e: None, WatchResult(chosen)
    )


def series_name(text: str) -> str:
    """A series named after something else (a folder, a training run): its letters kept,
    at most 64."""
    return (re.sub(r"[^A-Za-z0-9._-]", "-", text).strip("-._") or "checkpoints")[:64]


def _series_of(folder: Path) -> str:
    """A watch's series when none is named: its checkpoints folder's name."""
    return series_name(folder.resolve().name)


def _auth(options: dict[str, Any]) -> dict[str, str]:
    """The endpoint's key for the load and models routes (as the run's model calls)."""
    import os

    key = options.get("api_key") or os.environ.get(str(options.get("api_key_env") or ""), "")
    return {"Authorization": f"Bearer {key}"} if key else {}


__all__ = [
    "WatchEvent",
    "WatchResult",
    "aevaluate_checkpoint",
    "awatch_checkpoints",
    "watch_checkpoints",
]
