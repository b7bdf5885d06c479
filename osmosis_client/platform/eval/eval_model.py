"""An eval config's shape: its sections as strict pydantic models, the names and
patterns its values must match, and the payload ``eval submit`` sends."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    StrictBool,
    StrictFloat,
    StrictInt,
    StrictStr,
)

from osmosis_client.llm.reasoning import Effort

SAFE_SEGMENT = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*$")
SECRET_NAME = re.compile(r"^[A-Z][A-Z0-9_]*$")
ENV_NAME = re.compile(r"^[A-Z_][A-Z0-9_]*$")
#: set by the runner for a rollout server (rollout-protocol.md part B); never from a config
ROLLOUT_SERVER_VARS = frozenset(
    {"_OSMOSIS_ROLLOUT_PORT", "_OSMOSIS_ROLLOUT_ARTIFACT_ROOT", "_OSMOSIS_ROLLOUT_INSTANCE_ID"}
)
HEX_SHA = re.compile(r"^[0-9a-fA-F]{7,40}$")
BRANCH = re.compile(r"^(?!/)(?!.*\.\.)(?!.*//)[^\s~^:?*\[\\]+(?<![/.])$")

Number = StrictInt | StrictFloat
PositiveNumber = Annotated[Number, Field(gt=0)]


class _Section(BaseModel):
    model_config = ConfigDict(
        extra="forbid",
        strict=True,
        frozen=True,
        protected_namespaces=(),  # model_path
    )


class Experiment(_Section):
    rollout: StrictStr
    entrypoint: StrictStr
    model_path: Annotated[StrictStr, Field(min_length=1)]
    dataset: Annotated[StrictStr, Field(min_length=1)]
    commit_sha: StrictStr | None = None
    branch: StrictStr | None = None

    def to_payload(self, commit_sha: str | None) -> dict[str, Any]:
        """``experiment_config`` of a submit (eval or training): what runs, pinned to
        ``commit_sha`` — else the config's branch, else the platform's choice."""
        experiment: dict[str, Any] = {
            "rollout": self.rollout,
            "entrypoint": self.entrypoint,
            "model_path": self.model_path,
            "dataset": self.dataset,
        }
        if commit_sha:
            experiment["commit_sha"] = commit_sha
        elif self.branch:
            experiment["branch"] = self.branch
        return experiment


class Evaluation(_Section):
    limit: Annotated[StrictInt, Field(ge=1)] | None = None
    n: Annotated[StrictInt, Field(ge=1)] = 1
    batch_size: Annotated[StrictInt, Field(ge=1)] = 1
    pass_threshold: Number = 1.0
    agent_workflow_timeout_s: PositiveNumber = 450
    grader_timeout_s: PositiveNumber = 150


class Secrets(_Section):
    required: list[StrictStr] = Field(default_factory=list)


class Local(_Section):
    #: the series (a training's checkpoints) this config's runs belong to: one curve
    series: Annotated[StrictStr, Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")] | None = None
    dataset_file: StrictStr | None = None
    base_url: StrictStr | None = None
    api_key_env: StrictStr | None = None
    seed: Annotated[StrictInt, Field(ge=0)] = 0
    sampling: dict[str, Any] = Field(default_factory=dict)
    #: "server" (a published-SDK rollout server) or "native" (in-process); unset: detected
    mode: Literal["server", "native"] | None = None
    #: the interpreter (or virtual environment) a server-mode rollout runs on
    rollout_python: StrictStr | None = None
    #: a row of the endpoint registry to call instead of model_path
    endpoint_id: StrictStr | None = None
    #: the endpoint registry (default: configs/endpoints.toml under the project root)
    endpoints_path: StrictStr | None = None
    #: extra HTTP headers for model calls: a table, and/or "Name: Value" lines
    headers: dict[str, StrictStr] = Field(default_factory=dict)
    header: list[StrictStr] = Field(default_factory=list)
    #: a dataset column every statistic is also broken down by (like --by)
    slice_by: StrictStr | None = None
    #: a dataset column whose equal values share a context (one cluster of the mean's
    #: interval; like --cluster-by)
    cluster_by: StrictStr | None = None
    #: how hard a reasoning model thinks (mapped per provider: docs/models.md)
    reasoning_effort: Effort | None = None
    #: split ``<think>…</think>`` out of answers (a server with no reasoning parser)
    think_tags: StrictBool | None = None
    #: eval fns get the reasoning too (``<think>…</think>`` before the answer)
    raw_answers: StrictBool = False
    #: a price table (USD per million tokens), for what the run costs
    prices: StrictStr | None = None
    #: stop the run once its model calls have cost this much (USD)
    max_cost: PositiveNumber | None = None
    #: a call whose answer carries no usage: its cost unknown, or counted as free
    unknown_usage: Literal["unknown", "free"] | None = None
    #: an attempt's rollout gets no more model calls past this many tokens
    max_attempt_tokens: Annotated[StrictInt, Field(ge=1)] | None = None


class CacheTable(_Section):
    """``[cache]``: the local runs' model-call cache (docs/cache.md); hosted runs never
    use one."""

    enabled: bool = False
    #: where the cache lives (relative to the project; default: OSMOSIS_CACHE_DIR, else
    #: the user's cache directory)
    dir: StrictStr | None = None
    #: a name for the weights behind an endpoint that cannot say which they are
    scope: StrictStr | None = None


class EvalConfig(_Section):
    """A validated eval config. ``path`` and ``root`` say where it came from."""

    experiment: Experiment
    evaluation: Evaluation = Field(default_factory=Evaluation)
    advanced: dict[str, Any] = Field(default_factory=dict)
    env: dict[str, StrictStr] = Field(default_factory=dict)
    secrets: Secrets = Field(default_factory=Secrets)
    local: Local = Field(default_factory=Local)
    cache: CacheTable = Field(default_factory=CacheTable)
    path: Path | None = Field(default=None, exclude=True)
    root: Path | None = Field(default=None, exclude=True)

    @property
    def name(self) -> str:
        return self.path.stem if self.path else self.experiment.rollout

    @property
    def rollout_dir(self) -> Path:
        return (self.root or Path.cwd()) / "rollouts" / self.experiment.rollout

    @property
    def entrypoint_path(self) -> Path:
        return self.rollout_dir / self.experiment.entrypoint

    def to_submit_payload(self, commit_sha: str | None) -> dict[str, Any]:
        """The ``POST /api/cli/eval-runs`` body: unset keys and empty sections omitted."""
        payload: dict[str, Any] = {"experiment_config": self.experiment.to_payload(commit_sha)}
        evaluation = self.evaluation.model_dump(include=self.evaluation.model_fields_set)
        if evaluation:
            payload["evaluation_config"] = evaluation
        return {**payload, **shared_sections(self.advanced, self.env, self.secrets.required)}


def shared_sections(
    advanced: Mapping[str, Any], env: Mapping[str, str], secrets: Sequence[str]
) -> dict[str, Any]:
    """The sections an eval and a training config send alike (each only when set)."""
    found: dict[str, Any] = {}
    if advanced:
        found["advanced_config"] = dict(advanced)
    if env:
        found["env_config"] = dict(env)
    if secrets:
        found["secrets"] = {"required": list(secrets)}
    return found


SECTIONS: dict[str, type[BaseModel]] = {
    "experiment": Experiment,
    "evaluation": Evaluation,
    "secrets": Secrets,
    "local": Local,
}
FREE_SECTIONS = {"advanced", "env"}
TOP_KEYS = [*SECTIONS, *FREE_SECTIONS]
