"""Submitting a benchmark run (published-cli-0.3.8-train.md §4.9). No git source is
involved — a benchmark runs the platform's tasks against the configured agents — so the
config may live anywhere and nothing is pinned. ``osmosis benchmark submit`` is this
module plus a confirmation and rendering; a script calls :func:`submit_benchmark`.

Before anything is created (better than 0.3.8, which leaves all of it to the platform):
the benchmark is looked up (an unknown key, a catalog still syncing, task names,
categories or a task set it does not have are refused), and every secret the run reads
by name — model, harness, judge and verifier credentials — must already be stored
(values given with the submit reach ``[secrets].required`` names only).
"""

from __future__ import annotations

import uuid
from collections.abc import Collection, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from osmosis_client.errors import InvalidInputError, NotFoundError

if TYPE_CHECKING:
    from osmosis_client.platform._client import Client
    from osmosis_client.platform.benchmark.benchmark_config import BenchmarkConfig
    from osmosis_client.platform.benchmark.benchmark_models import (
        BenchmarkInfo,
        CreatedBenchmarkRun,
    )

HLE_PARITY = (
    'For HLE, we recommend [tasks] task_set = "parity" so results are comparable with '
    "published scores. This submission uses the full or a custom task selection."
)


@dataclass(frozen=True)
class BenchmarkPlan:
    """What a benchmark submit will send, before anything is sent."""

    path: Path
    config: BenchmarkConfig
    benchmark: BenchmarkInfo
    warnings: tuple[tuple[str, str], ...]  # (code, message)


def _check_tasks(config: BenchmarkConfig, benchmark: BenchmarkInfo) -> None:
    tasks = config.tasks
    problems = []
    if tasks.task_set and tasks.task_set not in {s.name for s in benchmark.task_sets}:
        problems.append(f"task_set {tasks.task_set!r} (it has none of that name)")
    known = {t.name for t in benchmark.tasks}
    unknown = [n for n in tasks.task_names or () if known and n not in known]
    if unknown:
        problems.append("task_names " + ", ".join(map(repr, unknown[:5])))
    categories = {c.name for c in benchmark.categories}
    unknown = [n for n in tasks.categories or () if categories and n not in categories]
    if unknown:
        problems.append("categories " + ", ".join(map(repr, unknown[:5])))
    if problems:
        raise InvalidInputError(
            f"{benchmark.name} has no {'; no '.join(problems)}",
            hint="see its tasks, categories and task sets with the benchmark's detail",
            code="VALIDATION",
            data={"benchmark": benchmark.key},
        )


def plan_benchmark(client: Client, path: str | Path) -> BenchmarkPlan:
    """Read and validate the config, look the benchmark up and check the selection."""
    from osmosis_client.platform.benchmark.benchmark_config import load_benchmark_config

    config = load_benchmark_config(path)
    wanted = config.experiment.benchmark
    try:
        benchmark = client.benchmarks.get(wanted).benchmark
    except NotFoundError as exc:
        close = _closest(client, wanted)
        mean = f"did you mean {close!r}? " if close else ""
        raise InvalidInputError(
            f"benchmark {wanted!r} not found",
            hint=f"{mean}use a key (or name) from the benchmark list",
            code="NOT_FOUND",
            data={"benchmark": wanted, "did_you_mean": close},
        ) from exc
    if benchmark.sync_status != "ready":
        reason = benchmark.sync_error or f"its task list is {benchmark.sync_status}"
        raise InvalidInputError(
            f"{benchmark.name} cannot run yet: {reason}",
            hint="submit once its task list is ready",
            code="BENCHMARK_NOT_READY",
        )
    _check_tasks(config, benchmark)
    warnings = []
    hle = "hle" in (wanted.strip().casefold(), benchmark.key.casefold())
    if hle and config.tasks.task_set != "parity":
        warnings.append(("HLE_PARITY_RECOMMENDED", HLE_PARITY))
    return BenchmarkPlan(Path(path), config, benchmark, tuple(warnings))


def _closest(client: Client, wanted: str) -> str | None:
    """The catalog's key nearest to a key that was not found (None: none is near, or
    the catalog cannot be read — the not-found stands either way)."""
    import difflib

    from osmosis_client.errors import OsmosisError

    try:
        keys = {b.source_ref: b for page in client.benchmarks.pages() for b in page.benchmarks}
    except OsmosisError:
        return None
    names = {b.name.casefold(): key for key, b in keys.items()}
    found = difflib.get_close_matches(wanted, list(keys), n=1, cutoff=0.5)
    if not found:
        by_name = difflib.get_close_matches(wanted.casefold(), list(names), n=1, cutoff=0.5)
        found = [names[by_name[0]]] if by_name else []
    return found[0] if found else None


def require_stored(
    client: Client, config: BenchmarkConfig, stored: Collection[str] | None = None
) -> None:
    """Every secret the run reads by name must be stored (``stored``: the names, when
    the caller has listed them already)."""
    names = config.referenced_secrets
    if not names:
        return
    if stored is None:
        stored = {s.name for s in client.secrets.all("all") if s.name}
    missing = [n for n in names if n not in stored]
    if missing:
        raise InvalidInputError(
            f"Could not find secret(s): {', '.join(missing)} — the run reads them by name "
            "(model, harness, judge or verifier credentials), so they must be stored first",
            hint="store each on the platform; a value given with the submit only reaches "
            "[secrets].required names",
            code="SECRETS_NOT_STORED",
            data={"missing": missing},
        )


def submit_planned_benchmark(
    client: Client, plan: BenchmarkPlan, *, secrets: Mapping[str, str] | None = None
) -> CreatedBenchmarkRun:
    """Create the run, sending values only for ``[secrets].required`` names (a value the
    platform echoes back is redacted from the error)."""
    from osmosis_client.platform.resources.secrets import only_required, redacting

    mine = only_required(secrets, plan.config.secrets.required)
    with redacting(mine.values()):
        return client.benchmark_runs.submit(plan.config, str(uuid.uuid4()), secrets=mine)


def submit_benchmark(
    client: Client, path: str | Path, *, secrets: Mapping[str, str] | None = None
) -> CreatedBenchmarkRun:
    """Plan, check the stored secrets and submit, in one call."""
    plan = plan_benchmark(client, path)
    require_stored(client, plan.config)
    return submit_planned_benchmark(client, plan, secrets=secrets)


__all__ = [
    "BenchmarkPlan",
    "plan_benchmark",
    "require_stored",
    "submit_benchmark",
    "submit_planned_benchmark",
]
