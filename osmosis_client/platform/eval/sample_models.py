"""A hosted run's samples (published-cli-0.3.8.md §5.1–5.2): the manifest of its output
files, the presigned URLs to fetch them, and what a retry answers."""

from __future__ import annotations

from typing import Any

from pydantic import AliasChoices, Field, field_validator

from osmosis_client.platform.models import Id, WireModel


class SampleFile(WireModel):
    """One file of a run's samples manifest (``sha256`` when the platform knows it)."""

    path: str
    size: int = Field(ge=0)
    token: str | None = None
    sha256: str | None = None


class SamplesManifest(WireModel):
    files: list[SampleFile]
    totals: dict[str, Any] = Field(default_factory=dict)


class SampleURL(WireModel):
    path: str
    url: str = Field(validation_alias=AliasChoices("url", "presignedUrl", "presigned_url"))
    token: str | None = None


class SampleURLs(WireModel):
    urls: list[SampleURL] = Field(validation_alias=AliasChoices("items", "files", "urls"))
    expires_in: int | None = None


class RetriedRun(WireModel):
    id: Id
    name: str
    status: str
    workflow_id: str
    retryable_samples: int = 0
    platform_url: str | None = None

    @field_validator("retryable_samples", mode="before")
    @classmethod
    def _zero(cls, value: Any) -> Any:
        return 0 if value is None else value
