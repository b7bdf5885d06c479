"""A benchmark run's outputs, fetched (published-cli-0.3.8-train.md §4.8) by the engine
of ``eval download`` (:mod:`osmosis_client.platform.eval.run_download`): every manifest path
checked before anything is written, resumable, size- and hash-checked, atomic, never
through a symlink, a re-run fetching only what is missing.

The fixed layout: ``summary.csv`` (summary), ``results.csv`` (results), ``logs.txt``
(logs), ``artifacts/<a>/<b>[/…]`` (artifacts, at least three segments); anything else
is refused as outside it.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from osmosis_client.layout import BENCHMARKS
from osmosis_client.platform.eval.run_download import (
    DownloadPlan,
    OutputKind,
    RunNotReady,
    sort_manifest,
)
from osmosis_client.platform.eval.sample_models import SampleFile, SampleURL

if TYPE_CHECKING:
    from osmosis_client.platform._client import Client
    from osmosis_client.platform.benchmark.benchmark_models import BenchmarkRun

TYPES = ("summary", "results", "artifacts", "logs")
DEFAULT_TYPES = ("summary", "results")
#: where a benchmark run's outputs go by default (under the workspace, else the cwd)
OUTPUT_DIR = BENCHMARKS
_FILES = {"summary.csv": "summary", "results.csv": "results", "logs.txt": "logs"}


def category(path: str) -> str | None:
    """The type a benchmark manifest path belongs to (None: outside the layout)."""
    if path in _FILES:
        return _FILES[path]
    if path.startswith("artifacts/") and len(path.split("/")) >= 3:
        return "artifacts"
    return None


def _urls(client: Client, run_id: str, files: list[SampleFile]) -> list[SampleURL]:
    return client.benchmark_runs.download_urls(run_id, files)


BENCHMARK_OUTPUTS = OutputKind("benchmark_run", TYPES, DEFAULT_TYPES, category, _urls)


def plan_benchmark_download(
    client: Client,
    run: BenchmarkRun | str,
    root: Path,
    *,
    types: Sequence[str] = DEFAULT_TYPES,
    overwrite: bool = False,
) -> DownloadPlan:
    """What a download of the run's outputs into ``root`` would fetch (nothing written);
    run it with :func:`osmosis_client.platform.eval.run_download.run_download`."""
    if isinstance(run, str):
        run = client.benchmark_runs.get(run).benchmark_run
    if run.status in ("pending", "queued"):
        raise RunNotReady("Outputs are not yet available for pending or queued benchmark runs.")
    manifest = client.benchmark_runs.outputs_manifest(str(run.id), list(types))
    plan = DownloadPlan(run, Path(root), list(types), None, manifest, BENCHMARK_OUTPUTS)
    return sort_manifest(plan, overwrite=overwrite)


__all__ = ["BENCHMARK_OUTPUTS", "DEFAULT_TYPES", "OUTPUT_DIR", "TYPES", "plan_benchmark_download"]
