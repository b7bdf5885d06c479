"""The platform's dataset records and upload instructions (published-cli-0.3.8.md §3)."""

from __future__ import annotations

from typing import Any

from pydantic import AliasChoices, Field

from osmosis_client.platform.models import Id, Page, WireModel

#: ``status`` values: uploaded is done; these are on their way; error / cancelled are final
IN_PROGRESS = frozenset({"pending", "uploading", "processing"})


class PresignedPart(WireModel):
    part_number: int
    presigned_url: str
    size: int | None = None


class UploadInstructions(WireModel):
    """How to send the bytes: one PUT (``simple``) or one PUT per part (``multipart``)."""

    method: str
    presigned_url: str | None = None
    expires_in: int | None = None
    upload_headers: dict[str, str] | None = None
    part_size: int | None = None
    total_parts: int | None = None
    presigned_urls: list[PresignedPart] | None = None


class Dataset(WireModel):
    """A dataset record (``upload`` only in the answer to a create)."""

    id: Id
    file_name: str | None = None
    file_size: int | None = None
    status: str | None = None
    data_preview: Any = None
    file_format: str | None = None
    original_file_format: str | None = None
    row_count: int | None = None
    original_file_size: int | None = None
    creator_name: str | None = None
    created_at: str | None = None
    updated_at: str | None = None
    platform_url: str | None = None
    is_internal_user: bool | None = None
    upload: UploadInstructions | None = None

    def to_json(self) -> dict[str, Any]:
        """The published CLI's JSON item (no preview, no internal flag, no upload)."""
        item = self.model_dump(
            mode="json", exclude={"data_preview", "is_internal_user", "upload", "platform_url"}
        )
        if self.platform_url:
            item["platform_url"] = self.platform_url
        return item


class DatasetPage(Page):
    datasets: list[Dataset]


class DatasetDownload(WireModel):
    """Where to fetch a dataset's file (the platform has sent both spellings)."""

    presigned_url: str = Field(validation_alias=AliasChoices("presigned_url", "presignedUrl"))
    expires_in: int | None = Field(
        default=None, validation_alias=AliasChoices("expires_in", "expiresIn")
    )
    file_name: str | None = Field(
        default=None,
        validation_alias=AliasChoices(
            "file_name", "fileName", "download_file_name", "downloadFileName"
        ),
    )
    sha256: str | None = None
    file_size: int | None = None
