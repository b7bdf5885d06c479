"""client.eval_runs logs on both faces: pages newest to oldest, cursors, following a live
run (dedupe, catch-up, surviving 429/5xx) — against respx."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import httpx
import pytest
import respx

from osmosis_client import RetryPolicy
from osmosis_client.errors import NotFoundError, ServerError
from osmosis_client.platform.resources import eval_logs, log_follow
from tests.osmosis_client.platform.conftest import Api
from tests.osmosis_client.platform.test_eval_runs import detail

MakeApi = Callable[..., Api]
#: the transport gives up at once: what is left to survive is the follow's own business
NO_RETRIES = RetryPolicy(max_retries=0)
LOGS = "/api/cli/eval-runs/demo-abc/logs"


def entry(i: int, step: str = "rollout") -> dict[str, Any]:
    return {
        "timestamp": f"2026-11-23T10:00:{i:02d}.000Z",
        "level": "info",
        "step": step,
        "message": f"event {i}",
    }


class LogServer:
    """The platform's paging over a growing log (oldest first in ``entries``)."""

    def __init__(self, entries: list[dict[str, Any]]) -> None:
        self.entries = entries
        self.requests: list[dict[str, str]] = []

    def __call__(self, request: httpx.Request) -> httpx.Response:
        params = dict(request.url.params)
        self.requests.append(params)
        limit = int(params["limit"])
        assert 1 <= limit <= 200 and params["direction"] == "older"
        end = int(params["cursor"]) if "cursor" in params else len(self.entries)
        start = max(0, end - limit)
        return httpx.Response(
            200,
            json={
                "logs": self.entries[start:end],  # oldest first within the page
                "next_cursor": str(start) if start else None,
            },
        )


def test_the_first_page_is_the_newest_with_a_cursor_to_older_ones(
    make_api: MakeApi, router: respx.MockRouter
) -> None:
    server = LogServer([entry(i) for i in range(5)])
    router.get(LOGS).mock(side_effect=server)
    api = make_api(token="t", workspace="a")
    page = api.call(lambda c: c.eval_runs.logs("demo-abc", limit=2))
    assert [e.message for e in page.logs] == ["event 3", "event 4"]
    assert page.next_cursor == "3"
    older = api.call(lambda c: c.eval_runs.logs("demo-abc", limit=2, cursor=page.next_cursor))
    assert [e.message for e in older.logs] == ["event 1", "event 2"]
    assert server.requests[1] == {"limit": "2", "direction": "older", "cursor": "3"}


def test_recent_logs_reads_pages_until_count_oldest_first(
    make_api: MakeApi, router: respx.MockRouter
) -> None:
    server = LogServer([entry(i % 60) | {"message": f"event {i}"} for i in range(450)])
    router.get(LOGS).mock(side_effect=server)
    api = make_api(token="t", workspace="a")
    entries = api.call(lambda c: c.eval_runs.recent_logs("demo-abc", 250))
    assert [e.message for e in entries] == [f"event {i}" for i in range(200, 450)]
    assert [r["limit"] for r in server.requests] == ["200", "50"]  # the platform's maximum
    everything = api.call(lambda c: c.eval_runs.recent_logs("demo-abc", 10_000))
    assert len(everything) == 450  # stops at the oldest page (next_cursor null)


def test_entries_keep_unknown_fields_out_and_details_in(
    make_api: MakeApi, router: respx.MockRouter
) -> None:
    router.get(LOGS).respond(
        200,
        json={
            "logs": [entry(1) | {"details": {"row": 3}, "shard": "x"}, {"timestamp": "t"}],
            "next_cursor": None,
        },
    )
    page = make_api(token="t", workspace="a").call(lambda c: c.eval_runs.logs("demo-abc"))
    assert page.logs[0].details == {"row": 3} and page.logs[0].to_json()["step"] == "rollout"
    assert page.logs[1].level == "info" and page.logs[1].message == ""


def test_follow_prints_each_entry_once_until_the_run_ends(
    make_api: MakeApi, router: respx.MockRouter
) -> None:
    server = LogServer([entry(0, "queue")])
    states = iter(["pending", "running", "running", "running", "finished"])
    growth = iter([[], [1, 2], [], list(range(3, 9)), [9]])

    def run_state(request: httpx.Request) -> httpx.Response:
        server.entries.extend(entry(i) for i in next(growth))
        return httpx.Response(200, json=detail(next(states), None))

    router.get("/api/cli/eval-runs/demo-abc").mock(side_effect=run_state)
    router.get(LOGS).mock(side_effect=server)
    seen: list[str] = []
    api = make_api(token="t", workspace="a")
    final = api.call(
        lambda c: c.eval_runs.follow_logs(
            "demo-abc", lambda es: seen.extend(e.message for e in es), limit=3
        )
    )
    assert final.status == "finished"
    assert seen == [f"event {i}" for i in range(10)]  # in order, none twice, none lost
    # six new entries with pages of 3: the follow read back an older page to catch up
    assert any("cursor" in r for r in server.requests)
    # 1 s after news, backing off (× 1.5) while nothing is new
    assert api.clock.sleeps == [1.0, 1.0, 1.5, 1.0]


def test_follow_survives_rate_limits_and_server_errors(
    make_api: MakeApi, router: respx.MockRouter
) -> None:
    server = LogServer([entry(0), entry(1)])
    router.get("/api/cli/eval-runs/demo-abc").mock(
        side_effect=[
            httpx.Response(503, json={"code": "UNAVAILABLE", "message": "deploying"}),
            httpx.Response(429, headers={"Retry-After": "2"}, json={"message": "slow down"}),
            httpx.Response(200, json=detail("running", None)),
            httpx.Response(200, json=detail("finished", None)),
        ]
    )
    router.get(LOGS).mock(side_effect=server)
    seen: list[str] = []
    api = make_api(token="t", workspace="a", retry_policy=NO_RETRIES)
    final = api.call(
        lambda c: c.eval_runs.follow_logs("demo-abc", lambda es: seen.extend(e.message for e in es))
    )
    assert final.status == "finished" and seen == ["event 0", "event 1"]
    assert api.clock.sleeps[:2] == [2.0, 4.0]  # the follow's own backoff between polls


def test_follow_gives_up_after_many_failures_and_on_a_missing_run(
    make_api: MakeApi, router: respx.MockRouter, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(log_follow, "FOLLOW_MAX_FAILURES", 3)
    router.get("/api/cli/eval-runs/demo-abc").respond(500, json={"message": "down"})
    api = make_api(token="t", workspace="a", retry_policy=NO_RETRIES)
    with pytest.raises(ServerError):
        api.call(lambda c: c.eval_runs.follow_logs("demo-abc", lambda es: None))
    assert len(api.clock.sleeps) == 3
    router.get("/api/cli/eval-runs/gone").respond(404, json={"message": "no run"})
    with pytest.raises(NotFoundError):
        api.call(lambda c: c.eval_runs.follow_logs("gone", lambda es: None))


def test_a_long_follow_remembers_a_bounded_number_of_entries(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A platform sending many entries per poll for a long time: every entry is handed
    over once, and what the follow keeps to drop repeats stays bounded (it grew without
    bound: 63 → 265 MB in a minute)."""
    monkeypatch.setattr(log_follow, "FOLLOW_SEEN_MIN", 100)
    server = LogServer([])
    polls, per_poll, limit = 400, 7, 10
    handed: list[str] = []
    largest = 0
    plan = eval_logs.follow_logs_plan(
        "demo-abc", limit, lambda es: handed.extend(e.message for e in es)
    )
    step = next(plan)
    poll = 0
    while True:
        if isinstance(step, float):
            outcome: Any = None
        elif step.options.path.endswith("/logs"):
            params = {k: str(v) for k, v in (step.options.params or {}).items()}
            request = httpx.Request("GET", "https://p.test" + LOGS, params=params)
            outcome = step.parse(server(request).json())
        else:
            poll += 1
            if poll <= polls:
                start = len(server.entries)
                server.entries.extend(
                    entry(0) | {"message": f"event {start + i}"} for i in range(per_poll)
                )
            status = "running" if poll <= polls else "finished"
            outcome = step.parse(detail(status, None))
        seen = plan.gi_frame.f_locals.get("seen") if plan.gi_frame else None
        largest = max(largest, len(seen or ()))
        try:
            step = plan.send(outcome)
        except StopIteration:
            break
    assert handed == [f"event {i}" for i in range(polls * per_poll)]  # each once, in order
    assert largest <= max(100, 4 * eval_logs.FOLLOW_CATCH_UP_PAGES * limit) + per_poll


def test_a_follow_of_long_entries_keeps_memory_flat() -> None:
    """Issue 33: many new entries per poll with long messages grew the follow by ~4 MB/s
    (what it remembered held every message); memory now stays flat past the first polls."""
    import gc
    import tracemalloc

    per_poll, limit, pad = 60, 200, "x" * 2000
    state = {"total": 0, "polls": 0}

    def page(cursor: str | None) -> dict[str, Any]:
        end = int(cursor) if cursor is not None else state["total"]
        start = max(0, end - limit)
        logs = [entry(0) | {"message": f"event {i} {pad}"} for i in range(start, end)]
        return {"logs": logs, "next_cursor": str(start) if start else None}

    handed = [0]
    plan = eval_logs.follow_logs_plan(
        "demo-abc", limit, lambda es: handed.__setitem__(0, handed[0] + len(es))
    )
    step = next(plan)
    marks: dict[int, int] = {}
    gc.collect()
    tracemalloc.start()
    try:
        while True:
            if isinstance(step, float):
                outcome: Any = None
            elif step.options.path.endswith("/logs"):
                outcome = step.parse(page((step.options.params or {}).get("cursor")))
            else:
                state["polls"] += 1
                state["total"] += per_poll
                if state["polls"] in (20, 600):
                    gc.collect()
                    marks[state["polls"]] = tracemalloc.get_traced_memory()[0]
                running = state["polls"] <= 600
                outcome = step.parse(detail("running" if running else "finished", None))
            try:
                step = plan.send(outcome)
            except StopIteration:
                break
    finally:
        tracemalloc.stop()
    assert handed[0] == state["total"]  # each entry once
    growth = marks[600] - marks[20]  # 34,800 more entries of 2 KB handed over
    assert growth < 3 << 20, f"grew {growth >> 10} KiB"
