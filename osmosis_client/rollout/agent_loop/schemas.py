"""The 0.2 agent-loop wire shapes: requests, results, metrics, tool schemas.

Names and fields follow the published ``osmosis_ai.rollout.core.schemas``
(rollout-protocol.md part A). Unknown fields are ignored everywhere.
"""

from __future__ import annotations

import enum
import json
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator

MAX_METADATA_BYTES = 1 << 20


class _Model(BaseModel):
    model_config = ConfigDict(extra="ignore", protected_namespaces=())


class RolloutStatus(str, enum.Enum):
    COMPLETED = "COMPLETED"
    ERROR = "ERROR"


class OpenAIFunctionPropertySchema(_Model):
    type: str
    description: str | None = None
    enum: list[str] | None = None


class OpenAIFunctionParametersSchema(_Model):
    type: str = "object"
    properties: dict[str, OpenAIFunctionPropertySchema] = Field(default_factory=dict)
    required: list[str] = Field(default_factory=list)


class OpenAIFunctionSchema(_Model):
    name: str
    description: str | None = None
    parameters: OpenAIFunctionParametersSchema = Field(
        default_factory=OpenAIFunctionParametersSchema
    )
    strict: bool = False


class OpenAIFunctionToolSchema(_Model):
    type: str = "function"
    function: OpenAIFunctionSchema


def tool_to_dict(tool: Any) -> dict[str, Any]:
    """A tool as sent to a model: schema classes without their null fields; plain
    dicts (which may hold nested schemas) unchanged."""
    if isinstance(tool, BaseModel):
        return tool.model_dump(mode="json", exclude_none=True)
    if isinstance(tool, dict):
        return tool
    raise TypeError(f"a tool must be a tool schema or a dict, not {type(tool).__name__}")


class RolloutMetrics(_Model):
    total_latency_ms: float = 0.0
    llm_latency_ms: float = 0.0
    tool_latency_ms: float = 0.0
    num_llm_calls: int = 0
    num_tool_calls: int = 0
    prompt_tokens: int = 0
    response_tokens: int = 0
    max_context_tokens: int = 0


class RolloutRequest(_Model):
    """What a trainer (or the local evaluator) asks an agent loop to do."""

    rollout_id: str = Field(min_length=1, max_length=256)
    server_url: str
    messages: list[dict[str, Any]]
    completion_params: dict[str, Any] = Field(default_factory=dict)
    tool_server_url: str | None = None
    max_turns: int = 10
    max_tokens_total: int = 8192
    metadata: dict[str, Any] = Field(default_factory=dict)
    api_key: str | None = None
    idempotency_key: str | None = None

    @field_validator("rollout_id")
    @classmethod
    def _not_blank(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("rollout_id must not be blank")
        return value

    @field_validator("server_url")
    @classmethod
    def _http_url(cls, value: str) -> str:
        from urllib.parse import urlsplit

        parts = urlsplit(value)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValueError("server_url must be an http(s) URL with a host")
        return value

    @field_validator("metadata")
    @classmethod
    def _json_metadata(cls, value: dict[str, Any]) -> dict[str, Any]:
        try:
            size = len(json.dumps(value).encode())
        except (TypeError, ValueError) as exc:
            raise ValueError(f"metadata must be JSON-serialisable ({exc})") from exc
        if size > MAX_METADATA_BYTES:
            raise ValueError("metadata must be at most 1 MiB of JSON")
        return value

    def __repr__(self) -> str:  # never show the trainer's API key
        return f"RolloutRequest(rollout_id={self.rollout_id!r}, messages={len(self.messages)})"


class RolloutResult(_Model):
    status: RolloutStatus
    final_messages: list[dict[str, Any]] = Field(default_factory=list)
    finish_reason: str = "stop"
    error_message: str | None = None
    metrics: RolloutMetrics = Field(default_factory=RolloutMetrics)
    reward: float | None = None


class CompletionsResult(_Model):
    """One model call's answer: the assistant message is kept verbatim."""

    message: dict[str, Any]
    usage: dict[str, Any] = Field(default_factory=dict)
    finish_reason: str = "stop"
    token_ids: list[int] | None = None
    logprobs: Any = None

    @property
    def tool_calls(self) -> list[dict[str, Any]]:
        calls = self.message.get("tool_calls")
        return list(calls) if isinstance(calls, list) else []

    @property
    def has_tool_calls(self) -> bool:
        return bool(self.tool_calls)

    @property
    def content(self) -> str | None:
        content = self.message.get("content")
        return content if isinstance(content, str) else None
