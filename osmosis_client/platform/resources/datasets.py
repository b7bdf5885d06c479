"""``client.datasets``: the platform's datasets (``/api/cli/datasets``,
published-cli-0.3.8.md §3): list, get, create + complete / abort around an upload, the
download URL, logs. The bytes themselves go to presigned URLs (``presigned.py``)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator, Sequence
from typing import Any

from osmosis_client.platform._transport import RequestOptions, encode_segment
from osmosis_client.platform.dataset.dataset_models import Dataset, DatasetDownload, DatasetPage
from osmosis_client.platform.models import LogPage, parse
from osmosis_client.platform.resources import _base as base

COMPLETE_TIMEOUT = 120.0  # with parts: the platform assembles them before answering

Parts = Sequence[tuple[int, str]]  # (part number, ETag)


def _dataset(data: Any) -> Dataset:
    return parse(Dataset, data, what="dataset")


def list_call(limit: int, offset: int) -> base.Call[DatasetPage]:
    read = base.reader(DatasetPage, "dataset list")
    return base.page_call("/api/cli/datasets", read, limit, offset)


def get_call(name_or_id: str) -> base.Call[Dataset]:
    path = f"/api/cli/datasets/{encode_segment(name_or_id)}"
    return base.Call(RequestOptions("GET", path, scope="required"), _dataset)


def create_call(
    name: str, file_size: int, extension: str, overwrite_dataset_id: str | None = None
) -> base.Call[Dataset]:
    body: dict[str, Any] = {"file_name": name, "file_size": file_size, "extension": extension}
    if overwrite_dataset_id is not None:
        body["overwrite_dataset_id"] = overwrite_dataset_id
    return base.Call(  # never retried: a second create would meet the first one (409)
        RequestOptions(
            "POST",
            "/api/cli/datasets",
            json=body,
            scope="required",
            retry=False,
            ambiguous="dataset",
        ),
        _dataset,
    )


def complete_call(dataset_id: str, extension: str, parts: Parts | None = None) -> base.Call[Any]:
    body: dict[str, Any] = {"file_extension": extension}
    if parts is not None:
        numbers = [n for n, _ in parts]
        if len(set(numbers)) != len(numbers):
            raise ValueError("duplicate part numbers")
        body["parts"] = [{"PartNumber": n, "ETag": etag} for n, etag in sorted(parts)]
    return base.Call(
        RequestOptions(
            "POST",
            f"/api/cli/datasets/{encode_segment(dataset_id)}/complete",
            json=body,
            scope="required",
            timeout=COMPLETE_TIMEOUT if parts else None,
        ),
        lambda data: data,
    )


def abort_call(dataset_id: str) -> base.Call[Any]:
    path = f"/api/cli/datasets/{encode_segment(dataset_id)}/abort"
    return base.Call(
        RequestOptions("POST", path, json={}, scope="required", retry=False), lambda data: data
    )


def download_call(name_or_id: str) -> base.Call[DatasetDownload]:
    path = f"/api/cli/datasets/{encode_segment(name_or_id)}/download"
    return base.Call(
        RequestOptions("GET", path, scope="required"),
        lambda data: parse(DatasetDownload, data, what="dataset download"),
    )


def logs_call(name_or_id: str, limit: int, cursor: str | None) -> base.Call[LogPage]:
    return base.log_page_call("/api/cli/datasets", name_or_id, limit, cursor, "dataset logs")


class Datasets(base.SyncResource):
    def list(self, limit: int = base.PAGE_LIMIT, offset: int = 0) -> DatasetPage:
        return self._client._execute(list_call(limit, offset))

    def pages(self, page_size: int = base.PAGE_LIMIT) -> Iterator[DatasetPage]:
        return base.walk_pages(lambda offset: self.list(page_size, offset))

    def get(self, name_or_id: str) -> Dataset:
        return self._client._execute(get_call(name_or_id))

    def create(
        self, name: str, file_size: int, extension: str, *, overwrite_dataset_id: str | None = None
    ) -> Dataset:
        """Register a dataset and get its upload instructions (409: the name is taken;
        the error's ``body`` carries ``existing_dataset_id``)."""
        return self._client._execute(create_call(name, file_size, extension, overwrite_dataset_id))

    def complete(self, dataset_id: str, extension: str, parts: Parts | None = None) -> Any:
        return self._client._execute(complete_call(dataset_id, extension, parts))

    def abort(self, dataset_id: str) -> Any:
        return self._client._execute(abort_call(dataset_id))

    def download_url(self, name_or_id: str) -> DatasetDownload:
        return self._client._execute(download_call(name_or_id))

    def logs(self, name_or_id: str, limit: int = 50, cursor: str | None = None) -> LogPage:
        return self._client._execute(logs_call(name_or_id, limit, cursor))


class AsyncDatasets(base.AsyncResource):
    async def list(self, limit: int = base.PAGE_LIMIT, offset: int = 0) -> DatasetPage:
        return await self._client._execute(list_call(limit, offset))

    def pages(self, page_size: int = base.PAGE_LIMIT) -> AsyncIterator[DatasetPage]:
        return base.awalk_pages(lambda offset: self.list(page_size, offset))

    async def get(self, name_or_id: str) -> Dataset:
        return await self._client._execute(get_call(name_or_id))

    async def create(
        self, name: str, file_size: int, extension: str, *, overwrite_dataset_id: str | None = None
    ) -> Dataset:
        return await self._client._execute(
            create_call(name, file_size, extension, overwrite_dataset_id)
        )

    async def complete(self, dataset_id: str, extension: str, parts: Parts | None = None) -> Any:
        return await self._client._execute(complete_call(dataset_id, extension, parts))

    async def abort(self, dataset_id: str) -> Any:
        return await self._client._execute(abort_call(dataset_id))

    async def download_url(self, name_or_id: str) -> DatasetDownload:
        return await self._client._execute(download_call(name_or_id))

    async def logs(self, name_or_id: str, limit: int = 50, cursor: str | None = None) -> LogPage:
        return await self._client._execute(logs_call(name_or_id, limit, cursor))
