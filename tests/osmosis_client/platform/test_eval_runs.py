"""client.eval_runs on both faces: idempotent create, pagination, wait."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import httpx
import pytest
import respx

from osmosis_client.errors import APITimeoutError, NotFoundError, ServerError
from osmosis_client.platform.resources.eval_runs import WaitTimeout
from tests.osmosis_client.platform.conftest import Api

MakeApi = Callable[..., Api]
PAYLOAD = {
    "experiment_config": {
        "rollout": "demo",
        "entrypoint": "main.py",
        "model_path": "m",
        "dataset": "d",
        "commit_sha": "a" * 40,
    }
}
CREATED = {
    "id": "r1",
    "name": "demo-abc",
    "status": "pending",
    "created_at": "2026-01-01T00:00:00Z",
    "platform_url": "https://platform.test/runs/r1",
}


def row(i: int, status: str = "finished") -> dict[str, Any]:
    return {
        "id": f"r{i}",
        "name": f"run-{i}",
        "status": status,
        "created_at": "2026-01-01T00:00:00Z",
        "model": {"name": "openai/gpt-5-mini"},
        "dataset": {"name": "d"},
        "rollout": {"name": "demo"},
        "results": {"pass_rate": 0.5, "score": 0.6},
    }


def pages(*chunks: list[dict[str, Any]]) -> list[httpx.Response]:
    """Responses for consecutive list pages holding ``chunks`` of rows."""
    total = sum(len(c) for c in chunks)
    out, offset = [], 0
    for i, chunk in enumerate(chunks):
        offset += len(chunk)
        more = i < len(chunks) - 1
        out.append(
            httpx.Response(
                200,
                json={
                    "eval_runs": chunk,
                    "total_count": total,
                    "has_more": more,
                    "next_offset": offset if more else None,
                },
            )
        )
    return out


def detail(status: str, pass_rate: float | None = 0.9) -> dict[str, Any]:
    return {
        "eval_run": {
            "id": "r1",
            "name": "demo-abc",
            "status": status,
            "created_at": "2026-01-01T00:00:00Z",
            "creator_email": "a@x",
        },
        "config": {"model_path": "openai/gpt-5-mini", "n": 2, "limit": 10},
        "results": None
        if pass_rate is None
        else {
            "pass_rate": pass_rate,
            "score": 0.8,
            "graded": 10,
            "passed": 9,
            "reward_stats": {"mean": 0.8, "pass_at_k": {"1": 0.9, "3": 0.99}},
        },
        "dataset": {"name": "d"},
        "rollout": {"name": "demo"},
        "entrypoint": "main.py",
        "branch": None,
        "commit_sha": "a" * 40,
        "env_config": {},
    }


def test_create_sends_payload_key_and_scope(make_api: MakeApi, router: respx.MockRouter) -> None:
    route = router.post("/api/cli/eval-runs").respond(201, json=CREATED)
    api = make_api(token="t", workspace="acme")
    created = api.call(lambda c: c.eval_runs.create(PAYLOAD, "a" * 40, idempotency_key="key-1"))
    assert created.name == "demo-abc"
    request = route.calls.last.request
    assert json.loads(request.read()) == PAYLOAD
    assert request.headers["Idempotency-Key"] == "key-1"
    assert request.headers["X-Osmosis-Workspace"] == "acme"


def test_lost_response_is_replayed_with_the_same_key(
    make_api: MakeApi, router: respx.MockRouter
) -> None:
    route = router.post("/api/cli/eval-runs").mock(
        side_effect=[
            httpx.ReadTimeout("lost"),
            httpx.Response(503),
            httpx.Response(200, json=CREATED),
        ]
    )
    api = make_api(token="t", workspace="acme")
    created = api.call(lambda c: c.eval_runs.create(PAYLOAD, "a" * 40))
    assert created.id == "r1"
    keys = {call.request.headers["Idempotency-Key"] for call in route.calls}
    assert len(keys) == 1 and route.call_count == 3


def test_ambiguous_create_failure_says_check_the_list(
    make_api: MakeApi, router: respx.MockRouter
) -> None:
    router.post("/api/cli/eval-runs").mock(side_effect=httpx.ReadTimeout("lost"))
    with pytest.raises(APITimeoutError) as info:
        make_api(token="t", workspace="acme").call(lambda c: c.eval_runs.create(PAYLOAD, "a" * 40))
    assert "may have been created" in (info.value.hint or "")
    assert info.value.data["maybe_created"] == "run"
    router.post("/api/cli/eval-runs").respond(500)
    with pytest.raises(ServerError) as info2:
        make_api(token="t", workspace="acme").call(lambda c: c.eval_runs.create(PAYLOAD, "a" * 40))
    assert "may have been created" in (info2.value.hint or "")
    assert info2.value.data["maybe_created"] == "run"


def test_iter_all_follows_next_offset(make_api: MakeApi, router: respx.MockRouter) -> None:
    route = router.get("/api/cli/eval-runs").mock(side_effect=pages([row(1), row(2)], [row(3)]))
    api = make_api(token="t", workspace="acme")
    if api.kind == "sync":
        names = [r.name for r in api.client.eval_runs.iter_all()]  # type: ignore[union-attr]
    else:

        async def collect(c: Any) -> list[str]:
            return [r.name async for r in c.eval_runs.iter_all()]

        names = api.call(collect)
    assert names == ["run-1", "run-2", "run-3"]
    assert [dict(c.request.url.params) for c in route.calls] == [
        {"limit": "50", "offset": "0"},
        {"limit": "50", "offset": "2"},
    ]


def test_list_filters_status_when_platform_ignores_it(
    make_api: MakeApi, router: respx.MockRouter
) -> None:
    router.get("/api/cli/eval-runs").respond(
        200,
        json={
            "eval_runs": [row(1, "running"), row(2, "finished")],
            "total_count": 2,
            "has_more": False,
            "next_offset": None,
        },
    )
    page = make_api(token="t", workspace="a").call(lambda c: c.eval_runs.list(status="running"))
    assert [r.name for r in page.eval_runs] == ["run-1"]


def test_list_retries_429_with_retry_after(make_api: MakeApi, router: respx.MockRouter) -> None:
    router.get("/api/cli/eval-runs").mock(
        side_effect=[
            httpx.Response(429, headers={"Retry-After": "3"}),
            httpx.Response(
                200,
                json={"eval_runs": [], "total_count": 0, "has_more": False, "next_offset": None},
            ),
        ]
    )
    api = make_api(token="t", workspace="a")
    api.call(lambda c: c.eval_runs.list())
    assert api.clock.sleeps == [3.0]


def test_get_merges_detail_into_one_run(make_api: MakeApi, router: respx.MockRouter) -> None:
    router.get("/api/cli/eval-runs/demo-abc").respond(200, json=detail("finished"))
    run = make_api(token="t", workspace="a").call(lambda c: c.eval_runs.get("demo-abc"))
    doc = run.to_json()
    assert doc["model"] == "openai/gpt-5-mini"
    assert doc["commit_sha"] == "a" * 40
    assert doc["results"]["reward_stats"]["pass_at_k"] == {"1": 0.9, "3": 0.99}
    assert set(doc) == {
        "id",
        "name",
        "status",
        "created_at",
        "started_at",
        "completed_at",
        "creator_email",
        "platform_url",
        "model",
        "dataset",
        "rollout",
        "entrypoint",
        "branch",
        "commit_sha",
        "config",
        "results",
    }


def test_run_without_id_is_rejected(make_api: MakeApi, router: respx.MockRouter) -> None:
    bad = detail("finished")
    del bad["eval_run"]["id"]
    router.get("/api/cli/eval-runs/x").respond(200, json=bad)
    from osmosis_client.errors import ProtocolError

    with pytest.raises(ProtocolError):
        make_api(token="t", workspace="a").call(lambda c: c.eval_runs.get("x"))


@pytest.mark.parametrize("terminal", ["finished", "failed", "stopped"])
def test_wait_reaches_each_terminal_status(
    make_api: MakeApi, router: respx.MockRouter, terminal: str
) -> None:
    router.get("/api/cli/eval-runs/demo-abc").mock(
        side_effect=[
            httpx.Response(200, json=detail("pending", None)),
            httpx.Response(200, json=detail("queued", None)),
            httpx.Response(200, json=detail("running", None)),
            httpx.Response(200, json=detail(terminal)),
        ]
    )
    metrics = router.get("/api/cli/eval-runs/demo-abc/metrics").respond(
        200, json={"status": "running", "overview": {"total_samples": 10, "completed_samples": 4}}
    )
    seen: list[tuple[str, Any]] = []
    api = make_api(token="t", workspace="a")
    run = api.call(
        lambda c: c.eval_runs.wait(
            "demo-abc",
            on_update=lambda r, m: seen.append((r.status, m)),
            monotonic=api.clock.monotonic,
        )
    )
    assert run.status == terminal
    assert [s for s, _ in seen] == ["pending", "queued", "running", terminal]
    assert seen[2][1].overview.completed_samples == 4
    assert metrics.call_count == 1  # not while pending
    assert api.clock.sleeps == [2.0, 3.0, 4.5]


def test_wait_times_out_and_names_the_run(make_api: MakeApi, router: respx.MockRouter) -> None:
    router.get("/api/cli/eval-runs/demo-abc").respond(200, json=detail("running", None))
    router.get("/api/cli/eval-runs/demo-abc/metrics").respond(404)
    api = make_api(token="t", workspace="a")
    with pytest.raises(WaitTimeout) as info:
        api.call(lambda c: c.eval_runs.wait("demo-abc", timeout=20, monotonic=api.clock.monotonic))
    assert "demo-abc" in info.value.message
    assert sum(api.clock.sleeps) == pytest.approx(20)
    assert max(api.clock.sleeps) <= 15


def test_stop_posts_then_reports_state(make_api: MakeApi, router: respx.MockRouter) -> None:
    stop = router.post("/api/cli/eval-runs/demo-abc/stop").respond(202, json={"ok": True})
    router.get("/api/cli/eval-runs/demo-abc").respond(200, json=detail("stopped", None))
    run = make_api(token="t", workspace="a").call(lambda c: c.eval_runs.stop("demo-abc"))
    assert run.status == "stopped"
    assert stop.calls.last.request.read() == b"{}"


def test_missing_run_is_not_found(make_api: MakeApi, router: respx.MockRouter) -> None:
    router.get("/api/cli/eval-runs/nope").respond(
        404, json={"code": "NOT_FOUND", "message": "no run"}
    )
    with pytest.raises(NotFoundError):
        make_api(token="t", workspace="a").call(lambda c: c.eval_runs.get("nope"))
