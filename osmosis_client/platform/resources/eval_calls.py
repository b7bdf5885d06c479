"""The calls of ``/api/cli/eval-runs`` (platform-api.md): what each sends and how its
answer is read. The faces (``eval_runs.py``) and the plans (waiting, logs) execute them."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from osmosis_client.platform._transport import RequestOptions, encode_segment
from osmosis_client.platform.models import (
    CreatedRun,
    EvalRun,
    EvalRunPage,
    LogPage,
    RunMetrics,
    page_from_wire,
    parse,
    run_from_detail,
)
from osmosis_client.platform.resources._base import Call, log_page_call
from osmosis_client.platform.sample_models import (
    RetriedRun,
    SampleFile,
    SamplesManifest,
    SampleURL,
    SampleURLs,
)

PAGE_LIMIT = 50
DOWNLOAD_URL_BATCH = 500


def create_call(payload: Mapping[str, Any], idempotency_key: str) -> Call[CreatedRun]:
    return Call(
        RequestOptions(
            "POST",
            "/api/cli/eval-runs",
            json=dict(payload),
            scope="required",
            idempotency_key=idempotency_key,
            ambiguous="run",
        ),
        lambda data: parse(CreatedRun, data, what="created run"),
    )


def list_call(limit: int, offset: int, status: str | None) -> Call[EvalRunPage]:
    params: dict[str, Any] = {"limit": min(max(limit, 1), PAGE_LIMIT), "offset": offset}
    if status:
        params["status"] = status

    def parse_page(data: Any) -> EvalRunPage:
        page = page_from_wire(data)
        if status:  # older platforms ignore `status`: filter what we got
            page.eval_runs = [r for r in page.eval_runs if r.status == status]
        return page

    return Call(
        RequestOptions("GET", "/api/cli/eval-runs", params=params, scope="required"), parse_page
    )


def get_call(name_or_id: str) -> Call[EvalRun]:
    return Call(
        RequestOptions("GET", f"/api/cli/eval-runs/{encode_segment(name_or_id)}", scope="required"),
        run_from_detail,
    )


def metrics_call(name_or_id: str) -> Call[RunMetrics]:
    return Call(
        RequestOptions(
            "GET",
            f"/api/cli/eval-runs/{encode_segment(name_or_id)}/metrics",
            scope="required",
        ),
        lambda data: parse(RunMetrics, data, what="run metrics"),
    )


def stop_call(name_or_id: str) -> Call[None]:
    return Call(
        RequestOptions(
            "POST",
            f"/api/cli/eval-runs/{encode_segment(name_or_id)}/stop",
            json={},
            scope="required",
        ),
        lambda data: None,
    )


def logs_call(name_or_id: str, limit: int, cursor: str | None) -> Call[LogPage]:
    return log_page_call("/api/cli/eval-runs", name_or_id, limit, cursor, "run logs")


def manifest_call(run_id: str, types: Sequence[str], rows: str | None) -> Call[SamplesManifest]:
    params: dict[str, Any] = {"types": ",".join(types)}
    if rows:
        params["rows"] = rows
    return Call(
        RequestOptions(
            "GET",
            f"/api/cli/eval-runs/{encode_segment(run_id)}/samples/manifest",
            params=params,
            scope="required",
        ),
        lambda data: parse(SamplesManifest, data, what="samples manifest"),
    )


def download_urls_call(run_id: str, items: Sequence[SampleFile]) -> Call[list[SampleURL]]:
    if len(items) > DOWNLOAD_URL_BATCH:
        raise ValueError(f"at most {DOWNLOAD_URL_BATCH} paths per request")
    body = {
        "items": [
            {"path": f.path, **({"token": f.token} if f.token is not None else {})} for f in items
        ]
    }
    return Call(
        RequestOptions(
            "POST",
            f"/api/cli/eval-runs/{encode_segment(run_id)}/samples/download-urls",
            json=body,
            scope="required",
        ),
        lambda data: parse(SampleURLs, data, what="download URLs").urls,
    )


def retry_call(name_or_id: str, secrets: Mapping[str, str] | None) -> Call[RetriedRun]:
    return Call(
        RequestOptions(
            "POST",
            f"/api/cli/eval-runs/{encode_segment(name_or_id)}/retry",
            json={"secrets": dict(secrets)} if secrets else {},
            scope="required",
            retry=False,  # a second retry would meet the first one
            ambiguous="retry",
        ),
        lambda data: parse(RetriedRun, data, what="retried run"),
    )
