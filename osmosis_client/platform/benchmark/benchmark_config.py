"""Benchmark configs (``configs/benchmark/*.toml``, published-cli-0.3.8-train.md
§4.10-4.11): load, validate every key **and value**, report all problems at
``FILE:LINE:COL`` (``agents.0.model.api_key_secret``).

Stricter than 0.3.8 where it helps: ``[execution]`` values are typed
(``attempts_per_task = "many"`` is refused here, sent by 0.3.8), and every problem is
reported at once where 0.3.8 stops at the first secret-reference failure. The rules of
names (env vars, secret references, harness credentials) are the facts'.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Annotated, Any, Literal, get_args

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    StrictInt,
    StrictStr,
    ValidationError as _ValidationError,
)

from osmosis_client.platform.benchmark.benchmark_rules import check_names
from osmosis_client.platform.config_check import (
    Collector,
    parse_toml,
    read_config_text,
    strict_message,
)
from osmosis_client.platform.config_values import Count, Fraction, NonBlank, Positive

Names16 = Annotated[list[StrictStr], Field(max_length=16)]
MODEL_TYPES = ("provider", "endpoint", "hosted")
#: what the summary shows for unset [execution] keys (the platform's defaults)
SHOWN_DEFAULTS = {"attempts_per_task": 1, "max_concurrent_attempts": 4}


class _Section(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)


class Experiment(_Section):
    benchmark: NonBlank


class Tasks(_Section):
    categories: list[NonBlank] | None = None
    task_names: list[NonBlank] | None = None
    task_set: Literal["parity"] | None = None


class ProviderModel(_Section):
    type: Literal["provider"]
    model: NonBlank
    api_key_secret: NonBlank


class EndpointModel(_Section):
    type: Literal["endpoint"]
    base_url: NonBlank
    model: NonBlank
    api_key_secret: NonBlank
    extra_headers: dict[str, StrictStr] | None = None


class HostedModel(_Section):
    type: Literal["hosted"]
    base_model: NonBlank
    lora_model_name: NonBlank


AgentModel = Annotated[ProviderModel | EndpointModel | HostedModel, Field(discriminator="type")]


class Agent(_Section):
    harness: StrictStr | None = None
    harness_api_key_secret: StrictStr | None = None
    env: dict[str, StrictStr] = Field(default_factory=dict)
    model: AgentModel

    @property
    def label(self) -> str:
        return self.harness or "default"

    @property
    def model_label(self) -> str:
        model = self.model
        if isinstance(model, HostedModel):
            return f"{model.base_model}:{model.lora_model_name}"
        return model.model


class Execution(_Section):
    attempts_per_task: Count | None = None
    max_concurrent_attempts: Count | None = None
    timeout_multiplier: Positive | None = None
    max_retries: Annotated[StrictInt, Field(ge=0)] | None = None
    pass_threshold: Fraction | None = None
    judge_model: NonBlank | None = None
    judge_api_key_secret: StrictStr | None = None


class NamedSecrets(_Section):
    required: Names16 = Field(default_factory=list)


class BenchmarkConfig(_Section):
    """A validated benchmark config. ``path`` says where it came from."""

    experiment: Experiment
    tasks: Tasks = Field(default_factory=Tasks)
    agents: Annotated[list[Agent], Field(min_length=1, max_length=8)]
    execution: Execution = Field(default_factory=Execution)
    verifier: NamedSecrets = Field(default_factory=NamedSecrets)
    secrets: NamedSecrets = Field(default_factory=NamedSecrets)
    env: dict[str, StrictStr] = Field(default_factory=dict)
    path: Path | None = Field(default=None, exclude=True)

    @property
    def referenced_secrets(self) -> list[str]:
        """Secret names the run reads by name and that must be stored beforehand (every
        one but ``[secrets].required``, whose values may come with the submit)."""
        names: list[str] = []
        for agent in self.agents:
            key = getattr(agent.model, "api_key_secret", None)
            names += [n for n in (key, agent.harness_api_key_secret) if n]
        if self.execution.judge_api_key_secret:
            names.append(self.execution.judge_api_key_secret)
        names += self.verifier.required
        return list(dict.fromkeys(n for n in names if n not in self.secrets.required))

    @property
    def tasks_label(self) -> str:
        tasks = self.tasks
        if tasks.task_set:
            return tasks.task_set
        if tasks.task_names or tasks.categories:
            n, m = len(tasks.task_names or ()), len(tasks.categories or ())
            return f"{n} task(s), {m} category(s)"
        return "all tasks"

    def to_submit_payload(self) -> dict[str, Any]:
        """The ``POST /api/cli/benchmark-runs`` body (§4.12): null keys dropped, empty
        sections omitted, each agent's ``env`` always sent; ``secrets`` (with an empty
        ``provided``) when ``[secrets].required`` names any."""
        payload: dict[str, Any] = {
            "experiment_config": {"benchmark": self.experiment.benchmark},
            "agents": [agent.model_dump(exclude_none=True) for agent in self.agents],
        }
        tasks = self.tasks.model_dump(exclude_none=True)
        if tasks:
            payload["tasks_config"] = tasks
        execution = self.execution.model_dump(exclude_none=True)
        if self.verifier.required:
            execution["verifier_secrets"] = list(self.verifier.required)
        if execution:
            payload["execution_config"] = execution
        if self.env:
            payload["env_config"] = dict(self.env)
        if self.secrets.required:
            payload["secrets"] = {"required": list(self.secrets.required), "provided": {}}
        return payload


def _check_shape(data: Mapping[str, Any], out: Collector) -> bool:
    """The checks 0.3.8 makes before its schema: [experiment], then [[agents]]."""
    if not isinstance(data.get("experiment"), dict):
        out.add(["experiment"], "the [experiment] section is required (a table)")
    agents = data.get("agents")
    if agents is None or agents == []:
        out.add(["agents"], "the [[agents]] section is required (at least one agent)")
    elif not isinstance(agents, list):
        out.add(["agents"], "[[agents]] must be an array of tables ([[agents]], not [agents])")
    return not out.problems


def _check_schema(data: Mapping[str, Any], out: Collector) -> None:
    try:
        BenchmarkConfig.model_validate(data)
    except _ValidationError as exc:
        for err in exc.errors():
            # a model's union tag is not a key the file has: agents.0.model.provider.x
            loc = [
                p
                for i, p in enumerate(err["loc"])
                if not (p in MODEL_TYPES and i and err["loc"][i - 1] == "model")
            ]
            message = strict_message(err, _keys_at(err["loc"]))
            out.add(loc, message)


#: the model table of each ``type``, as the union's tag names it in an error's path
MODEL_TABLES: dict[str, type[BaseModel]] = {
    "provider": ProviderModel,
    "endpoint": EndpointModel,
    "hosted": HostedModel,
}


def _keys_at(loc: tuple[Any, ...]) -> list[str]:
    """The keys the table holding an unrecognized key may have (for a did-you-mean)."""
    model: type[BaseModel] = BenchmarkConfig
    for part in loc[:-1]:
        if isinstance(part, int):
            continue
        if part in MODEL_TABLES:
            model = MODEL_TABLES[part]
            continue
        field = model.model_fields.get(str(part))
        inner = _model_in(field.annotation) if field is not None else None
        if inner is None and str(part) != "model":  # an agent's model: its tag comes next
            return []
        model = inner or model
    return [k for k in model.model_fields if k != "path"]


def _model_in(annotation: Any) -> type[BaseModel] | None:
    """The one model class an annotation holds (``list[Agent]``, ``Tasks | None``)."""
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    found = [m for arg in get_args(annotation) if (m := _model_in(arg)) is not None]
    return found[0] if len(found) == 1 else None


def parse_benchmark_config(text: str, *, path: Path) -> BenchmarkConfig:
    """Validate TOML ``text``; raise :class:`ConfigError` listing every problem."""
    shown = str(path)
    data = parse_toml(text, shown)
    out = Collector.for_text(shown, text, numbered=True)
    if _check_shape(data, out):
        _check_schema(data, out)
        check_names(data, out)
    out.raise_if_any(error="Invalid benchmark config")
    return BenchmarkConfig.model_validate({**data, "path": path})


def load_benchmark_config(path: str | Path) -> BenchmarkConfig:
    """Read and validate a benchmark config file (anywhere: no workspace is needed)."""
    path = Path(path).expanduser()
    return parse_benchmark_config(read_config_text(path), path=path)


__all__ = [
    "Agent",
    "BenchmarkConfig",
    "EndpointModel",
    "Execution",
    "HostedModel",
    "ProviderModel",
    "Tasks",
    "load_benchmark_config",
    "parse_benchmark_config",
]
