"""From the trainer: a ``transformers.TrainerCallback`` (TRL's trainers, and anything on
``transformers.Trainer``) that evaluates each saved checkpoint as a step of one series
without holding the training step: ``on_save`` only hands the checkpoint to a worker
thread, which evaluates one at a time — when saves pile up, the newest wins (a checkpoint
already outdated is skipped, never queued behind) — and ``on_train_end`` waits for the
last one. A failure is the step's, recorded and logged; never the training's.

Imported only by whoever asks for it: it needs ``transformers``::

    from osmosis_local_runner.api.trainer import OsmosisEvalCallback

    trainer = GRPOTrainer(..., callbacks=[OsmosisEvalCallback(
        "configs/eval/math.toml", series="grpo-math", model="Qwen/Qwen3-8B",
        base_url="http://localhost:8000/v1", limit=200)])
"""

from __future__ import annotations

import logging
import threading
from pathlib import Path
from typing import Any

from transformers import TrainerCallback

from osmosis_local_runner.api.blocking import run_blocking
from osmosis_local_runner.api.watching import WatchResult, aevaluate_checkpoint

logger = logging.getLogger("osmosis_client.trainer")


class OsmosisEvalCallback(TrainerCallback):
    """Evaluate each checkpoint the trainer saves (``checkpoint-N`` under its
    ``output_dir``) as step N of ``series`` — loaded into vLLM as a runtime LoRA, or served
    by ``serve_cmd`` — in the background (see the module). ``options``: ``run_eval``'s
    keywords (``model``, ``base_url``, ``limit``, ``n``, ``log_to``…)."""

    def __init__(self, config: str | Path, *, series: str | None = None, **options: Any) -> None:
        self.config = Path(config)
        self.series = series
        self.options = options
        #: what each evaluated step became (the order they were evaluated in)
        self.results: list[WatchResult] = []
        self._pending: tuple[int, Path] | None = None
        self._busy = False
        self._changed = threading.Condition()
        self._worker: threading.Thread | None = None

    def on_save(self, args: Any, state: Any, control: Any, **kwargs: Any) -> Any:
        step = int(state.global_step)
        path = Path(args.output_dir) / f"checkpoint-{step}"
        with self._changed:
            self._pending = (step, path)  # an older one not started yet is outdated
            self._changed.notify_all()
            if self._worker is None:
                self._worker = threading.Thread(target=self._work, name="osmosis-eval", daemon=True)
                self._worker.start()
        return control

    def on_train_end(self, args: Any, state: Any, control: Any, **kwargs: Any) -> Any:
        self.wait()
        return control

    def wait(self, timeout: float | None = None) -> bool:
        """Until nothing is pending or running (False: ``timeout`` passed first)."""
        with self._changed:
            return self._changed.wait_for(lambda: self._pending is None and not self._busy, timeout)

    def _work(self) -> None:
        while True:
            with self._changed:
                self._changed.wait_for(lambda: self._pending is not None)
                assert self._pending is not None
                (step, path), self._pending = self._pending, None
                self._busy = True
            try:
                self.results.append(self._evaluate(step, path))
            except Exception:  # the training goes on, whatever one evaluation did
                logger.exception("evaluating checkpoint %s failed", path)
            finally:
                with self._changed:
                    self._busy = False
                    self._changed.notify_all()

    def _evaluate(self, step: int, path: Path) -> WatchResult:
        return run_blocking(
            lambda: aevaluate_checkpoint(
                self.config, path, step, series=self.series, **self.options
            )
        )


__all__ = ["OsmosisEvalCallback"]
