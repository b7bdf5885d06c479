"""Rubric config files (YAML or TOML), in the published SDK's shape::

    version: 1
    title: Support rubrics            # optional, descriptive
    default_score_min: 0              # optional: for entries without their own bounds
    default_score_max: 1
    rubrics:
      - id: support_followup
        title: Follow-up quality      # optional, descriptive
        rubric: "…"
        model_info: {provider: openai, model: gpt-5-mini, api_key_env: OPENAI_API_KEY}
        score_min: 0                  # optional
        score_max: 1

Configs may not carry ``extra_info`` (per-example context belongs in the dataset)
nor a literal ``api_key``. Other unknown keys are ignored with a warning.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from osmosis_client.errors import ConfigError, Problem

logger = logging.getLogger("osmosis_client")


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, protected_namespaces=())  # model_info


class JudgeModelInfo(BaseModel):
    model_config = ConfigDict(extra="allow", frozen=True, protected_namespaces=())

    provider: str = Field(min_length=1)
    model: str = Field(min_length=1)
    api_key_env: str | None = None
    base_url: str | None = None
    timeout: float | None = Field(default=None, gt=0)
    system_prompt: str | None = None


class RubricEntry(_Strict):
    id: str = Field(min_length=1)
    rubric: str = Field(min_length=1)
    model_info: JudgeModelInfo
    score_min: float = 0.0
    score_max: float = 1.0
    title: str | None = None
    description: str | None = None

    @model_validator(mode="after")
    def _bounds(self) -> RubricEntry:
        if self.score_min >= self.score_max:
            raise ValueError("score_min must be below score_max")
        if "api_key" in (self.model_info.model_extra or {}):
            raise ValueError("model_info.api_key is not allowed in a file: use api_key_env")
        return self

    def judge_info(self) -> dict[str, Any]:
        info = self.model_info.model_dump(exclude_none=True)
        info["score_min"], info["score_max"] = self.score_min, self.score_max
        return info


class RubricConfig(_Strict):
    version: int = 1
    title: str | None = None
    description: str | None = None
    default_score_min: float | None = None
    default_score_max: float | None = None
    rubrics: list[RubricEntry] = Field(min_length=1)
    #: unknown keys that were ignored (``PATH: key``), for the caller to show
    warnings: list[str] = Field(default_factory=list, exclude=True)

    @model_validator(mode="after")
    def _unique(self) -> RubricConfig:
        ids = [r.id for r in self.rubrics]
        duplicates = sorted({i for i in ids if ids.count(i) > 1})
        if duplicates:
            raise ValueError(f"duplicate rubric ids: {', '.join(duplicates)}")
        return self

    def get(self, rubric_id: str) -> RubricEntry:
        for entry in self.rubrics:
            if entry.id == rubric_id:
                return entry
        known = ", ".join(r.id for r in self.rubrics)
        from osmosis_client.errors import InvalidInputError

        raise InvalidInputError(f"no rubric {rubric_id!r} in the config (known: {known})")


def _read(path: Path) -> Any:
    text = path.read_text(encoding="utf-8")
    if path.suffix.lower() == ".toml":
        import tomlkit
        from tomlkit.exceptions import TOMLKitError

        try:
            return tomlkit.parse(text).unwrap()
        except TOMLKitError as exc:
            raise ConfigError(
                f"{path} is not valid TOML",
                [Problem(str(path), getattr(exc, "line", None), None, "", str(exc))],
            ) from exc
    import yaml

    try:
        return yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = mark.line + 1 if mark is not None else None
        raise ConfigError(
            f"{path} is not valid YAML",
            [Problem(str(path), line, None, "", str(getattr(exc, "problem", exc)))],
        ) from exc


def load_rubric_config(path: Path) -> RubricConfig:
    if not path.is_file():
        raise ConfigError(
            f"rubric config {path} does not exist",
            hint="check the path",
            code="RUBRIC_CONFIG_NOT_FOUND",
        )
    data = _read(path)
    if not isinstance(data, dict):
        raise ConfigError(f"{path} must hold a mapping with `rubrics`")
    data, warnings = _known_keys(data, str(path))
    for warning in warnings:
        logger.warning("%s", warning)
    try:
        return RubricConfig.model_validate({**data, "warnings": warnings})
    except ValidationError as exc:
        problems = []
        for err in exc.errors():
            key = ".".join(str(p) for p in err["loc"])
            message = (
                "unknown key (configs may not carry extra_info)"
                if err["type"] == "extra_forbidden"
                else err["msg"]
            )
            problems.append(Problem(str(path), None, None, key, message))
        raise ConfigError(f"{path} is not a valid rubric config", problems) from exc


_TOP_KEYS = {"version", "title", "description", "default_score_min", "default_score_max", "rubrics"}
_ENTRY_KEYS = {"id", "title", "description", "rubric", "model_info", "score_min", "score_max"}


def _known_keys(data: dict[str, Any], shown: str) -> tuple[dict[str, Any], list[str]]:
    """Drop unknown descriptive keys (warnings); keep ``extra_info`` so it is refused.
    Entries without bounds get the file's ``default_score_min`` / ``default_score_max``."""
    warnings: list[str] = []

    def keep(raw: dict[str, Any], known: set[str], where: str) -> dict[str, Any]:
        out = {}
        for key, value in raw.items():
            if key in known or key == "extra_info":
                out[key] = value
            else:
                warnings.append(f"{shown}: {where}{key}: unknown key ignored")
        return out

    top = keep(data, _TOP_KEYS, "")
    entries = top.get("rubrics")
    if isinstance(entries, list):
        defaults = {
            "score_min": top.get("default_score_min"),
            "score_max": top.get("default_score_max"),
        }
        top["rubrics"] = [
            {
                **{k: v for k, v in defaults.items() if v is not None},
                **keep(entry, _ENTRY_KEYS, f"rubrics.{i}."),
            }
            if isinstance(entry, dict)
            else entry
            for i, entry in enumerate(entries)
        ]
    return top, warnings


RUBRIC_CONFIG_NAMES = ("rubric_configs.yaml", "rubric_configs.yml", "rubric_configs.toml")


def find_rubric_config(near: Path) -> Path:
    """The rubric config beside a dataset (``rubric_configs.{yaml,yml,toml}``)."""
    for name in RUBRIC_CONFIG_NAMES:
        candidate = near.parent / name
        if candidate.is_file():
            return candidate
    raise ConfigError(
        f"no rubric config next to {near} (looked for {', '.join(RUBRIC_CONFIG_NAMES)})",
        hint="name the rubric config file",
        code="RUBRIC_CONFIG_NOT_FOUND",
    )
