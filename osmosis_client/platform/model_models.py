"""Wire models of the platform's models: base models, LoRA adapters trained on them, and
their inference deployments (published-cli-0.3.8-train.md §3)."""

from __future__ import annotations

from typing import Any

from pydantic import field_validator

from osmosis_client.platform.models import Page, WireModel


def _finite(value: Any) -> float | None:
    """A finite, non-bool number, else None (as the published client reads them)."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    number = float(value)
    return number if number - number == 0.0 else None


class BaseModelInfo(WireModel):
    """A base model (``GET /api/cli/models/base``)."""

    id: str
    model_name: str | None = None
    base_model: str | None = None  # the Hugging Face path
    creator_name: str | None = None
    created_at: str | None = None
    updated_at: str | None = None


class BaseModelDetail(BaseModelInfo):
    """``GET /api/cli/models/base/{name}``: the model, its size and inference prices."""

    namespace: str | None = None
    parameters: int | None = None
    context_window: int | None = None
    hf_url: str | None = None
    inference_input_usd_per_million_tokens: float | None = None
    inference_cached_input_usd_per_million_tokens: float | None = None
    inference_output_usd_per_million_tokens: float | None = None
    platform_url: str | None = None
    is_internal_user: bool = False

    @field_validator(
        "inference_input_usd_per_million_tokens",
        "inference_cached_input_usd_per_million_tokens",
        "inference_output_usd_per_million_tokens",
        mode="before",
    )
    @classmethod
    def _price(cls, value: Any) -> float | None:
        return _finite(value)


class LoraModel(WireModel):
    """A LoRA adapter (``GET /api/cli/models/lora``). ``deployment_status`` is absent
    when the platform offers no inference: :attr:`has_deployment` says which."""

    id: str
    model_name: str | None = None
    base_model: str | None = None
    training_run_name: str | None = None
    checkpoint_step: int | None = None
    reward: float | None = None
    deployment_status: str | None = None
    deployed_at: str | None = None
    deployed_by: str | None = None
    created_at: str | None = None

    @field_validator("reward", mode="before")
    @classmethod
    def _reward(cls, value: Any) -> float | None:
        return _finite(value)

    @property
    def has_deployment(self) -> bool:
        return "deployment_status" in self.model_fields_set

    @property
    def deployed(self) -> bool:
        return self.deployment_status == "active"


class LoraModelDetail(LoraModel):
    """``GET /api/cli/models/{name}``."""

    hf_upload_status: str | None = None
    hf_url: str | None = None
    uploaded_by: str | None = None
    inference_model: str | None = None  # "<base model path>:<lora name>" while deployed
    platform_url: str | None = None
    is_internal_user: bool = False


class BaseModelPage(Page):
    models: list[BaseModelInfo]


class LoraModelPage(Page):
    """A page of LoRA adapters, with the workspace's deployment quota when the platform
    offers inference."""

    models: list[LoraModel]
    active_deployments: int | None = None
    max_active_deployments: int | None = None


class Deployment(WireModel):
    """What ``deploy`` / ``undeploy`` answer: ``status`` ``active`` or ``inactive``."""

    id: str
    model_name: str | None = None
    status: str | None = None


__all__ = [
    "BaseModelDetail",
    "BaseModelInfo",
    "BaseModelPage",
    "Deployment",
    "LoraModel",
    "LoraModelDetail",
    "LoraModelPage",
]
