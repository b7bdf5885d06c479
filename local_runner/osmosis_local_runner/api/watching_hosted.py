"""A platform training run's checkpoints watched and evaluated as one series
(``osmosis eval watch CONFIG --training RUN --deploy``).

The platform does not evaluate a training's checkpoints itself: an eval run is submitted
for a base model and a commit (``../shared/platform-api.md``), and a checkpoint is a LoRA
adapter (``GET /api/cli/training-runs/{name}/checkpoints``, uploaded ones) that serves
inference only once deployed (``POST /api/cli/models/{name}/deploy``, counted against
the workspace's deployment quota). So each uploaded checkpoint, in step order, is
deployed — only when asked (``deploy``), a full quota refused naming what holds it —,
evaluated locally against the platform's inference endpoint (``OSMOSIS_INFERENCE_URL``,
key ``OSMOSIS_API_KEY``, the model its ``inference_model``) as the run
``SERIES-step-N``, and undeployed if this watch deployed it."""

from __future__ import annotations

import asyncio
import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from osmosis_client import Client
from osmosis_client.errors import InvalidInputError, OsmosisError
from osmosis_client.layout import EVALS
from osmosis_client.platform.model_models import LoraModelDetail
from osmosis_client.platform.training.training_models import Checkpoint
from osmosis_local_runner.api.watching import WatchEvent, WatchResult, series_name
from osmosis_local_runner.run.session.rundir import RunDirectory
from osmosis_local_runner.run.watch.serving import Sleep

#: where the platform serves deployed models, and the key it takes (the platform's docs)
INFERENCE_URL = "OSMOSIS_INFERENCE_URL"
INFERENCE_KEY = "OSMOSIS_API_KEY"
#: a training run in one of these states makes no more checkpoints
ENDED = ("finished", "completed", "failed", "stopped", "cancelled", "error")


async def awatch_training(
    config: str | Path,
    training: str,
    *,
    client: Client,
    deploy: bool = False,
    series: str | None = None,
    once: bool = False,
    until: int | None = None,
    poll: float = 60.0,
    on_event: Callable[[WatchEvent], None] | None = None,
    sleep: Sleep = asyncio.sleep,
    root: str | Path | None = None,
    **options: Any,
) -> WatchResult:
    """Evaluate the uploaded checkpoints of the platform's training run ``training`` as
    one series (see the module) until it ends, ``until`` is evaluated or, ``once``, what
    is there now. ``options``: ``run_eval``'s keywords (``limit``, ``n``, ``log_to``…)."""
    if not deploy:
        raise InvalidInputError(
            "the platform serves a checkpoint only once it is deployed, and deploying uses "
            "the workspace's inference quota: nothing was deployed",
            hint="ask for deployment explicitly (each checkpoint this watch deploys is "
            "undeployed after its run)",
            code="DEPLOY_REQUIRED",
        )
    base = os.environ.get(INFERENCE_URL)
    if not base:
        raise InvalidInputError(
            f"{INFERENCE_URL} is not set: where the platform serves deployed models",
            hint=f"export {INFERENCE_URL}=… and {INFERENCE_KEY}=… (the platform's API key)",
            code="USAGE",
        )
    say = on_event or (lambda event: None)
    from osmosis_local_runner.run.request.settings import check_series

    chosen = check_series(series or series_name(training))
    project = Path(root) if root is not None else Path.cwd()
    result, handled = WatchResult(chosen), set[int]()
    watch = _Hosted(client, Path(config), training, chosen, base, project, options, result, say)
    while True:
        detail = await asyncio.to_thread(client.training_runs.get, training)
        found = await asyncio.to_thread(client.training_runs.checkpoints, training)
        for checkpoint in _uploaded(found.checkpoints, until, handled):
            name = f"{chosen}-step-{checkpoint.checkpoint_step}"
            handled.add(checkpoint.checkpoint_step)
            if RunDirectory(project / EVALS, name).state() == "finished":
                result.finished[checkpoint.checkpoint_step] = name
                say(WatchEvent("skipped", checkpoint.checkpoint_step, name, "finished before"))
                continue
            await _evaluate(watch, checkpoint, name)
        ended = str(detail.training_run.status or "").lower() in ENDED
        if once or ended or (until is not None and any(s >= until for s in handled)):
            return result
        say(WatchEvent("waiting", message=f"for checkpoints of {training}"))
        await sleep(poll)


def watch_training(config: str | Path, training: str, **options: Any) -> WatchResult:
    """:func:`awatch_training` from synchronous code."""
    from osmosis_local_runner.api.blocking import run_blocking

    return run_blocking(lambda: awatch_training(config, training, **options))


def _uploaded(found: list[Checkpoint], until: int | None, handled: set[int]) -> list[Checkpoint]:
    """The uploaded checkpoints not handled yet, in step order (named: a LoRA to deploy)."""
    return sorted(
        (
            c
            for c in found
            if c.status == "uploaded"
            and c.checkpoint_name
            and c.checkpoint_step not in handled
            and (until is None or c.checkpoint_step <= until)
        ),
        key=lambda c: c.checkpoint_step,
    )


@dataclass
class _Hosted:
    """One hosted watch's fixed parts."""

    client: Client
    config: Path
    training: str
    series: str
    base: str
    project: Path
    options: dict[str, Any]
    result: WatchResult
    say: Callable[[WatchEvent], None]


async def _evaluate(watch: _Hosted, checkpoint: Checkpoint, name: str) -> None:
    """Deploy (when it is not), evaluate, undeploy what this watch deployed; a failure is
    the step's, recorded."""
    from osmosis_local_runner.api.running import arun_eval

    step, lora, client = checkpoint.checkpoint_step, str(checkpoint.checkpoint_name), watch.client
    deployed = False
    try:
        watch.say(WatchEvent("serving", step, name, f"deploying {lora}"))
        detail = await asyncio.to_thread(client.models.get, lora)
        if not isinstance(detail, LoraModelDetail):
            raise OsmosisError(f"{lora} is not a LoRA model of the workspace", code="NOT_FOUND")
        if detail.deployment_status != "active":
            await asyncio.to_thread(client.models.deploy, lora)  # a full quota: said, with who
            deployed = True
            detail = await asyncio.to_thread(client.models.get, lora)
        served = detail.inference_model if isinstance(detail, LoraModelDetail) else None
        model = served or lora
        weights = {
            "platform_checkpoint": checkpoint.id,
            "checkpoint_name": lora,
            "training_run": watch.training,
            "checkpoint_step": step,
            "inference_model": model,
        }
        watch.say(WatchEvent("evaluating", step, name))
        done = await arun_eval(
            watch.config,
            **watch.options,
            model=model,
            base_url=watch.base.rstrip("/") + "/v1",
            api_key_env=INFERENCE_KEY,
            name=name,
            series=watch.series,
            step=step,
            weights=weights,
            root=watch.project,
            resume=True,
        )
    except OsmosisError as exc:  # this step failed: said and kept, the watch goes on
        watch.result.failed[step] = exc.message
        watch.say(WatchEvent("failed", step, name, exc.message))
        return
    finally:
        if deployed:  # ours: freed for the next checkpoint (and the user's own)
            await asyncio.to_thread(client.models.undeploy, lora)
    watch.result.finished[step] = name
    mean = done.summary.mean
    watch.say(WatchEvent("finished", step, name, "" if mean is None else f"{mean:.3f}"))


__all__ = ["awatch_training", "watch_training"]
