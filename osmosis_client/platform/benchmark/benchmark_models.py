"""Wire models of benchmarks and benchmark runs (published-cli-0.3.8-train.md §4): the
catalog entry and its detail (tasks, leaderboard), a run as listed and in detail, the
answer of a submit. Leaderboard rows, a run's configuration, agents and totals are the
platform's own documents and pass through as they are."""

from __future__ import annotations

from typing import Any

from pydantic import AliasChoices, Field, field_validator, model_validator

from osmosis_client.platform.models import Id, Page, Submitted, WireModel

#: benchmark-run statuses by what they mean (§1.4)
PENDING = frozenset({"pending", "queued"})
TERMINAL = frozenset({"finished", "failed", "stopped"})
DIFFICULTIES = frozenset({"easy", "medium", "hard"})


class TaskSet(WireModel):
    name: str
    task_count: int
    recommended: bool = False
    description: str | None = None


class Benchmark(WireModel):
    """A catalog entry (``GET /api/cli/benchmarks``)."""

    id: Id
    name: str
    source_type: str
    source_ref: str  # the key `benchmark info` and configs use
    task_count: int
    category_count: int
    description: str | None = None
    source_url: str | None = None
    task_sets: list[TaskSet] = Field(default_factory=list)
    sync_status: str = "ready"
    synced_task_count: int = 0
    sync_error: str | None = None
    platform_url: str | None = None
    run_count: int = 0
    running_count: int = 0
    last_run_at: str | None = None
    last_run_status: str | None = None
    last_run_name: str | None = None
    creator_name: str | None = None

    @property
    def key(self) -> str:
        return self.source_ref

    @property
    def ready(self) -> bool:
        return self.sync_status == "ready"


class BenchmarkPage(Page):
    benchmarks: list[Benchmark]


class Category(WireModel):
    name: str
    task_count: int = 0


class Task(WireModel):
    name: str
    category: str | None = None
    difficulty: str | None = None

    @field_validator("difficulty", mode="before")
    @classmethod
    def _difficulty(cls, value: Any) -> Any:
        return value if value in DIFFICULTIES else None


class BenchmarkInfo(Benchmark):
    """A benchmark with what a run of it needs: runner, harness, judge, tasks."""

    runner_family: str
    supports_harness: bool
    requires_harness: bool
    requires_judge_model: bool
    requires_judge_api_key: bool = False
    judge_model_default: str | None = None
    default_harness: str | None = None
    pass_threshold: float
    categories: list[Category] = Field(default_factory=list)
    tasks: list[Task] = Field(default_factory=list)
    unavailable_tasks: dict[str, Any] | None = None


class BenchmarkDetail(WireModel):
    """``GET /api/cli/benchmarks/{key}`` (the key, the id or the name)."""

    benchmark: BenchmarkInfo
    leaderboard: list[dict[str, Any]] = Field(default_factory=list)


class BenchmarkRun(Submitted):
    """A benchmark run as listed (and the core of its detail)."""

    id: Id
    name: str | None = Field(
        default=None, validation_alias=AliasChoices("name", "benchmark_run_name")
    )
    status: str | None = None
    benchmark_name: str | None = None
    benchmark_id: str | None = None
    agent_count: int = 0
    best_pass_at_1: float | None = None
    ingested_results: int = 0
    expected_results: int = 0

    @model_validator(mode="before")
    @classmethod
    def _nested(cls, data: Any) -> Any:
        """``benchmark: {id, name}`` stands for the flat keys when they are missing."""
        if isinstance(data, dict) and isinstance(data.get("benchmark"), dict):
            nested = data["benchmark"]
            data = {**data}
            data.setdefault("benchmark_name", nested.get("name"))
            data.setdefault("benchmark_id", nested.get("id"))
        return data

    @field_validator("agent_count", "ingested_results", "expected_results", mode="before")
    @classmethod
    def _zero(cls, value: Any) -> Any:
        return 0 if value is None else value

    @property
    def terminal(self) -> bool:
        return self.status in TERMINAL

    @property
    def progress(self) -> dict[str, Any] | None:
        if not self.expected_results:
            return None
        return {
            "completed": self.ingested_results,
            "total": self.expected_results,
            "unit": "results",
        }


class BenchmarkRunPage(Page):
    benchmark_runs: list[BenchmarkRun]


class BenchmarkRunDetail(WireModel):
    """``GET /api/cli/benchmark-runs/{name}``, with the published fallbacks applied:
    the benchmark from the configuration, progress from ``progress``, the agent count
    from the agents, the best pass@1 from the agents' metrics."""

    benchmark_run: BenchmarkRun
    configuration: dict[str, Any] = Field(default_factory=dict)
    agents: list[dict[str, Any]] = Field(default_factory=list)
    progress: dict[str, Any] | None = None
    totals: dict[str, Any] = Field(default_factory=dict)
    agent_metrics: list[dict[str, Any]] = Field(default_factory=list)
    is_internal_user: bool = False

    @model_validator(mode="after")
    def _fallbacks(self) -> BenchmarkRunDetail:
        run, config = self.benchmark_run, self.configuration
        update: dict[str, Any] = {}
        if run.benchmark_name is None and isinstance(config.get("benchmark_name"), str):
            update["benchmark_name"] = config["benchmark_name"]
        if run.benchmark_id is None and isinstance(config.get("benchmark_id"), str):
            update["benchmark_id"] = config["benchmark_id"]
        progress = self.progress or {}
        for key, field in (("ingested", "ingested_results"), ("expected", "expected_results")):
            if isinstance(progress.get(key), int):
                update[field] = progress[key]
        if not run.agent_count and self.agents:
            update["agent_count"] = len(self.agents)
        if run.best_pass_at_1 is None:
            values = [_pass_at_1(m) for m in self.agent_metrics]
            found = [v for v in values if v is not None]
            update["best_pass_at_1"] = max(found) if found else None
        if update:
            object.__setattr__(self, "benchmark_run", run.model_copy(update=update))
        return self


def _pass_at_1(metrics: dict[str, Any]) -> float | None:
    point = metrics.get("pass_at_1")
    value = point.get("value") if isinstance(point, dict) else None
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


class CreatedBenchmarkRun(WireModel):
    """The answer of ``POST /api/cli/benchmark-runs``."""

    id: Id
    name: str
    status: str
    created_at: str
    workflow_id: str
    task_count: int
    platform_url: str | None = None


__all__ = [
    "Benchmark",
    "BenchmarkDetail",
    "BenchmarkInfo",
    "BenchmarkPage",
    "BenchmarkRun",
    "BenchmarkRunDetail",
    "BenchmarkRunPage",
    "CreatedBenchmarkRun",
]
