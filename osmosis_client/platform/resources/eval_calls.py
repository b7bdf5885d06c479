"""The calls of ``/api/cli/eval-runs`` (platform-api.md): what each sends and how its
answer is read. The faces (``eval_runs.py``) and the plans (waiting, logs) execute them."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from osmosis_client.platform._transport import RequestOptions, encode_segment
from osmosis_client.platform.eval.sample_models import RetriedRun, SamplesManifest
from osmosis_client.platform.models import (
    CreatedRun,
    EvalRun,
    EvalRunPage,
    RunMetrics,
    page_from_wire,
    parse,
    run_from_detail,
)
from osmosis_client.platform.resources._base import PAGE_LIMIT as PAGE_LIMIT, Call, reader
from osmosis_client.platform.resources.run_routes import (
    DOWNLOAD_URL_BATCH as DOWNLOAD_URL_BATCH,
    RunRoutes,
)

ROUTES: RunRoutes[CreatedRun, EvalRunPage, EvalRun] = RunRoutes(
    "/api/cli/eval-runs",
    "run",
    created=reader(CreatedRun, "created run"),
    page=page_from_wire,
    detail=run_from_detail,
    ambiguous="run",
    outputs="samples",
)
create_call = ROUTES.create
get_call = ROUTES.get
stop_call = ROUTES.stop
logs_call = ROUTES.logs
download_urls_call = ROUTES.download_urls


def list_call(limit: int, offset: int, status: str | None) -> Call[EvalRunPage]:
    call = ROUTES.list(limit, offset, status=status)
    if not status:
        return call

    def parse_page(data: Any) -> EvalRunPage:
        page = page_from_wire(data)  # older platforms ignore `status`: filter what we got
        page.eval_runs = [r for r in page.eval_runs if r.status == status]
        return page

    return Call(call.options, parse_page)


def metrics_call(name_or_id: str) -> Call[RunMetrics]:
    return ROUTES.part(name_or_id, "/metrics", reader(RunMetrics, "run metrics"))


def manifest_call(run_id: str, types: Sequence[str], rows: str | None) -> Call[SamplesManifest]:
    return ROUTES.manifest(run_id, types, rows=rows)


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
