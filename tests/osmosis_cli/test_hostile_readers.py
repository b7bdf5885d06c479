"""Readers of a project's runs against planted and hostile run directories (issue 51):
any one run's bad document is listed as unreadable, never the whole project's failure;
a planted manifest costs no memory; the viewer sends strict JSON and keeps a link's
query through its token redirect."""

from __future__ import annotations

import asyncio
import json
import tracemalloc
from pathlib import Path
from typing import Any

import pytest
from aiohttp.test_utils import TestClient, TestServer

from osmosis_local_runner.api.history import list_runs
from osmosis_local_runner.viewer.server import Viewer
from tests.helpers import quickstart_run
from tests.osmosis_cli.conftest import Invoke

RUN = quickstart_run(2)


def _strict(text: str) -> Any:
    def refuse(token: str) -> None:
        raise AssertionError(f"not JSON: {token}")

    return json.loads(text, parse_constant=refuse)


@pytest.fixture
def hostile(quickstart_project: Path, invoke: Invoke) -> Path:
    assert invoke(*RUN, "--name", "good").exit_code == 0
    runs = quickstart_project / ".osmosis" / "evals"
    good = json.loads((runs / "good" / "results.json").read_text())
    for name, change in (
        ("huge", {"usage": {"cost_usd": 1e308, "output_tokens": 10**400, "calls": 2}}),
        ("infinite", {"total_duration_ms": "Infinity", "usage": {"cost_usd": -5}}),
    ):
        (runs / name).mkdir()
        document = json.loads(json.dumps(good))
        document["summary"].update(change)
        text = json.dumps(document).replace('"Infinity"', "Infinity")
        (runs / name / "results.json").write_text(text)
        (runs / name / "manifest.json").write_text((runs / "good" / "manifest.json").read_text())
    (runs / "garbage").mkdir()
    (runs / "garbage" / "results.json").write_text("{not json")
    (runs / "garbage" / "manifest.json").write_text("[1, 2")
    planted = json.loads((runs / "good" / "manifest.json").read_text())
    planted["inputs"]["dataset"]["selected_source_rows"] = "0-10000000,0-9999999"
    (runs / "planted").mkdir()
    (runs / "planted" / "manifest.json").write_text(json.dumps(planted))
    return quickstart_project


def test_every_reader_survives_any_one_runs_bad_files(hostile: Path, invoke: Invoke) -> None:
    from osmosis_local_runner import runs_df

    tracemalloc.start()
    found = {r.name: r for r in list_runs(hostile)}
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert peak < 20 << 20  # the planted 10-million-row range is counted, never expanded
    assert set(found) >= {"good", "huge", "infinite", "garbage", "planted"}
    assert found["planted"].total_attempts == 10_000_001 * 3
    assert found["good"].status == "finished"
    for run in found.values():  # nothing absurd or non-finite reaches a reader
        assert run.cost_usd is None or 0 <= run.cost_usd < float("inf")
        assert run.output_tokens is None or run.output_tokens <= 2**53
        assert run.duration_ms is None or run.duration_ms < float("inf")
    listed = invoke("--json", "eval", "list", "--local")
    assert listed.exit_code == 0, listed.stderr
    assert {r["name"] for r in _strict(listed.stdout)["items"]} == set(found)
    plain = invoke("eval", "list", "--local")
    assert plain.exit_code == 0 and "garbage" in plain.stdout
    for name in found:
        info = invoke("eval", "info", "--local", name)
        assert info.exit_code == 0 and "Traceback" not in info.stderr, (name, info.stderr)
    frame = runs_df(hostile, engine="pandas")
    assert set(frame["name"]) == set(found)

    viewer = Viewer(hostile)

    async def check(client: TestClient[Any, Any]) -> None:
        await client.get(f"/?token={viewer.token}")
        home = await client.get("/api/runs")
        assert home.status == 200
        assert {r["name"] for r in _strict(await home.text())["runs"]} == set(found)

    asyncio.run(_served(viewer, check))


async def _served(viewer: Viewer, check: Any) -> None:
    async with TestClient(TestServer(viewer.app())) as client:
        await check(client)


def test_the_token_redirect_keeps_the_rest_of_the_query(hostile: Path) -> None:
    viewer = Viewer(hostile)

    async def check(client: TestClient[Any, Any]) -> None:
        entry = await client.get(
            f"/sweep?runs=good,huge&token={viewer.token}", allow_redirects=False
        )
        assert entry.status == 302
        assert entry.headers["Location"] == "/sweep?runs=good,huge"

    asyncio.run(_served(viewer, check))


def test_a_review_whose_body_arrives_in_pieces_is_read_whole(hostile: Path) -> None:
    """A browser, a proxy or a slow link may send the body in several pieces (chunked
    here): it is read whole, within its cap, never refused for arriving in parts."""
    viewer = Viewer(hostile)
    body = json.dumps({"row": 0, "attempt": 0, "verdict": "fail", "reason": "x" * 3000})

    async def check(client: TestClient[Any, Any]) -> None:
        await client.get(f"/?token={viewer.token}")
        cookie = "; ".join(f"{c.key}={c.value}" for c in client.session.cookie_jar)
        reader, writer = await asyncio.open_connection("127.0.0.1", client.port)
        head = (
            f"POST /runs/good/reviews HTTP/1.1\r\nHost: 127.0.0.1:{client.port}\r\n"
            f"Cookie: {cookie}\r\n"
            f"X-Osmosis-Key: {viewer.write_key}\r\nContent-Type: application/json\r\n"
            "Transfer-Encoding: chunked\r\nConnection: close\r\n\r\n"
        )
        writer.write(head.encode())
        for piece in (body[:10], body[10:2000], body[2000:]):
            writer.write(f"{len(piece.encode()):x}\r\n{piece}\r\n".encode())
            await writer.drain()
            await asyncio.sleep(0.02)  # a slow peer: the pieces arrive apart
        writer.write(b"0\r\n\r\n")
        answer = await asyncio.wait_for(reader.read(), 10)
        writer.close()
        assert answer.startswith(b"HTTP/1.1 200"), answer[:200]
        too_big = await client.post(
            "/runs/good/reviews",
            data=json.dumps({"row": 0, "attempt": 0, "comment": "x" * (70 << 10)}),
            headers={"X-Osmosis-Key": viewer.write_key},
        )
        assert too_big.status == 413

    asyncio.run(_served(viewer, check))
    reviews = (hostile / ".osmosis/evals/good/reviews.jsonl").read_text().splitlines()
    assert len(reviews) == 1 and json.loads(reviews[0])["verdict"] == "fail"
