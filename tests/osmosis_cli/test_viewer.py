"""``osmosis eval view`` (issue 36, part 3 — its first pieces): the token, read-only
routes, run pages from the report's code, the home's JSON feed, no path outside the
runs root; and the command serving over a real socket."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import shutil
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import httpx
import pytest
from aiohttp.test_utils import TestClient, TestServer

from osmosis_local_runner.viewer.server import COOKIE, Viewer
from tests.child_output import Child
from tests.osmosis_cli.conftest import Invoke

RUN = ["eval", "run", "configs/eval/quickstart.toml", "--model", "mock/calculator", "-q"]


@pytest.fixture
def project(quickstart_project: Path, invoke: Invoke) -> Path:
    for name in ("first", "second"):
        assert invoke(*RUN, "--name", name, "--limit", "3").exit_code == 0
    return quickstart_project


def served(viewer: Viewer, check: Callable[[TestClient[Any, Any]], Awaitable[None]]) -> None:
    async def go() -> None:
        async with TestClient(TestServer(viewer.app())) as client:
            await check(client)

    asyncio.run(go())


def test_nothing_is_served_without_the_token(project: Path) -> None:
    viewer = Viewer(project)

    async def check(client: TestClient[Any, Any]) -> None:
        for path in ("/", "/api/runs", "/runs/first", "/compare/first/second"):
            answer = await client.get(path)
            assert answer.status == 403, path
            assert "first" not in await answer.text()
        wrong = await client.get("/?token=nope", allow_redirects=False)
        assert wrong.status == 403
        client.session.cookie_jar.update_cookies({COOKIE.format(port=client.port): "forged"})
        assert (await client.get("/api/runs")).status == 403
        icon = await client.get("/favicon.ico")  # every tab asks: no 404 in its console
        assert icon.status == 200 and icon.content_type == "image/svg+xml"
        assert "first" not in await icon.text()

    served(viewer, check)


def test_the_token_becomes_a_cookie_and_the_pages_show_every_run(project: Path) -> None:
    viewer = Viewer(project)

    async def check(client: TestClient[Any, Any]) -> None:
        entry = await client.get(f"/?token={viewer.token}", allow_redirects=False)
        assert entry.status == 302 and entry.headers["Location"] == "/"  # token out of the URL
        assert "httponly" in entry.headers["Set-Cookie"].lower()
        home = await client.get("/")
        assert home.status == 200 and "Content-Security-Policy" in await home.text()
        assert home.headers["X-Frame-Options"] == "DENY"
        runs = (await (await client.get("/api/runs")).json())["runs"]
        assert {r["name"] for r in runs} == {"first", "second"}
        assert all(r["status"] == "finished" and r["rows"] == 3 for r in runs)
        assert all("path" not in r for r in runs)  # no machine paths on the page
        page = await (await client.get("/runs/first")).text()
        assert "<title>osmosis eval report — first</title>" in page
        both = await (await client.get("/compare/first/second")).text()
        assert "first vs second" in both
        itself = await (await client.get("/compare/first/first")).text()
        assert "first vs first (2)" in itself  # told apart as eval report does
        assert (await client.post("/api/runs")).status == 405  # read-only

    served(viewer, check)


def test_no_request_reads_outside_the_runs_root(project: Path, tmp_path: Path) -> None:
    outside = tmp_path / "secret"
    outside.mkdir()
    (outside / "results.json").write_text("{}")
    os.symlink(outside, project / ".osmosis" / "evals" / "linked")
    viewer = Viewer(project)

    async def check(client: TestClient[Any, Any]) -> None:
        await client.get(f"/?token={viewer.token}")
        for path in (
            "/runs/..%2F..%2Fetc",
            "/runs/linked",
            "/runs/missing",
            "/compare/first/..%2Fsecret",
        ):
            answer = await client.get(path)
            assert answer.status == 404, path
            assert "Traceback" not in await answer.text()

    served(viewer, check)


def test_eval_view_serves_on_loopback_and_prints_its_url(project: Path) -> None:
    with Child([sys.executable, "-m", "osmosis_cli", "eval", "view", "--no-browser"]) as child:
        url = child.err.wait_for(r"http://127\.0\.0\.1:\d+/\?token=\S+", 30).group(0)
        with httpx.Client(timeout=10) as client:
            base = url.split("?")[0]
            assert client.get(base + "api/runs").status_code == 403
            assert client.get(url, follow_redirects=True).status_code == 200
            runs = client.get(base + "api/runs").json()["runs"]
            assert {r["name"] for r in runs} == {"first", "second"}
        child.proc.terminate()


def test_eval_view_json_says_where_it_serves_then_keeps_serving(project: Path) -> None:
    """``--json``: the one document (the URL an agent opens) as soon as it serves — it
    used to end in an INTERNAL error after Ctrl-C, having said nothing."""
    command = [sys.executable, "-m", "osmosis_cli", "--json", "eval", "view", "--no-browser"]
    with Child(command) as child:
        line = child.out.wait_for(r"^\{.*\}$", 30).group(0)
        data = json.loads(line)["data"]
        assert data["url"].startswith("http://127.0.0.1:") and data["root"] == str(project)
        with httpx.Client(timeout=10) as client:
            assert client.get(data["url"], follow_redirects=True).status_code == 200
        child.proc.terminate()
    assert "INTERNAL" not in child.err.text()


def test_a_run_without_its_document_yet_shows_what_its_journal_holds(project: Path) -> None:
    """A running run (or one killed before it wrote its document): its page is built from
    the journal's finished attempts; while an invocation holds the run it says running
    and follows it in place (issue 46), else it says stopped (issue 43)."""
    from osmosis_local_runner.results.documents.records import AttemptRecord
    from osmosis_local_runner.run.session.journal import JOURNAL_VERSION

    live = project / ".osmosis" / "evals" / "live"
    live.mkdir()
    (live / "manifest.json").write_text('{"created_at": "2026-01-01T00:00:00Z", "inputs": {}}')
    fingerprint = {"model": "mock/live", "n": 2, "pass_threshold": 1.0, "eval_fns": ["grader"]}
    records = [
        AttemptRecord(
            row_index=0,
            run_index=k,
            row_digest="d0",
            success=True,
            scores={"grader": 1.0},
            duration_ms=5,
            tokens=3,
            error=None,
            answer="42",
        )
        for k in range(2)
    ]
    lines = [json.dumps({"journal": JOURNAL_VERSION, "fingerprint": fingerprint})]
    lines += [r.journal_line() for r in records]
    (live / "results.json.journal.jsonl").write_text("\n".join(lines) + "\n" + '{"torn')
    viewer = Viewer(project)

    async def check(client: TestClient[Any, Any]) -> None:
        from osmosis_local_runner.run.session.rundir import RunDirectory

        await client.get(f"/?token={viewer.token}")
        killed = await (await client.get("/runs/live")).text()
        assert "mock/live" in killed
        data = json.loads(killed.split('id="data">', 1)[1].split("</script>")[0])
        assert data["runs"][0]["summary"]["status"] == "stopped" and "live" not in data
        with RunDirectory(live.parent, "live").locked():  # an invocation runs it now
            answer = await client.get("/runs/live")
            assert answer.status == 200
            page = await answer.text()
            update = await (await client.get("/runs/live/live")).json()
        # no reload (it lost the reader's place): the page polls its update and applies it
        assert '<meta http-equiv="refresh"' not in page and "mock/live" in page
        assert "connect-src 'self'" in page
        data = json.loads(page.split('id="data">', 1)[1].split("</script>")[0])
        assert data["live"] == "/runs/live/live"
        assert data["runs"][0]["summary"]["status"] == "running"
        assert data["runs"][0]["summary"]["total_runs"] == 2  # the torn line is not kept
        assert update["running"] is True and len(update["rows"]) == 1
        assert "mock/live" in update["cards"]
        finished = await (await client.get("/runs/first")).text()
        shown = json.loads(finished.split('id="data">', 1)[1].split("</script>")[0])
        assert "live" not in shown  # a finished run's page asks for no update
        # nothing written beside the run
        assert sorted(p.name for p in live.iterdir()) == [
            "manifest.json",
            "results.json.journal.jsonl",
        ]

    served(viewer, check)


def test_suite_runs_are_listed_and_open_as_their_report(
    quickstart_project: Path, invoke: Invoke
) -> None:
    run = [
        "eval",
        "run",
        "configs/eval/suite.toml",
        "--limit",
        "2",
        "-q",
        "-o",
        ".osmosis/suites/sweep",
    ]
    assert invoke(*run).exit_code == 0
    outside = quickstart_project / "elsewhere.json"
    hostile = quickstart_project / ".osmosis" / "suites" / "hostile"
    hostile.mkdir()
    first = json.loads((quickstart_project / ".osmosis/suites/sweep/suite.json").read_text())
    shutil.copy(quickstart_project / first["entries"][0]["output"], outside)
    first["entries"] = [{**first["entries"][0], "output": str(outside)}]
    (hostile / "suite.json").write_text(json.dumps(first))  # names a document outside it
    viewer = Viewer(quickstart_project)

    async def check(client: TestClient[Any, Any]) -> None:
        assert (await client.get("/api/suites")).status == 403
        await client.get(f"/?token={viewer.token}")
        suites = (await (await client.get("/api/suites")).json())["suites"]
        by_name = {s["name"]: s for s in suites}
        assert by_name["sweep"]["suite"] == "quickstart-suite"
        assert by_name["sweep"]["entries"] == 5 and by_name["sweep"]["status"] == "finished"
        page = await client.get("/suites/sweep")
        assert page.status == 200 and "quickstart-suite" in await page.text()
        refused = await client.get("/suites/hostile")
        assert refused.status == 404 and "outside its directory" in await refused.text()
        for name in ("sweep%2F..%2F..", "..%2Fevals", "missing"):
            assert (await client.get(f"/suites/{name}")).status == 404, name

    served(viewer, check)


# ------------------------------------------------------------ the fourth audit (issue 46)


def test_two_viewers_keep_their_own_cookies_and_no_cookie_holds_the_token(project: Path) -> None:
    """Cookies are kept per host, not per port: each viewer's is named by its port, so
    opening a second viewer never logs the first one's tab out."""
    import aiohttp

    first, second = Viewer(project), Viewer(project)

    async def go() -> None:
        async with TestServer(first.app()) as one, TestServer(second.app()) as two:
            jar = aiohttp.CookieJar(unsafe=True)  # one browser, both viewers on 127.0.0.1
            async with aiohttp.ClientSession(cookie_jar=jar) as browser:
                await browser.get(one.make_url(f"/?token={first.token}"))
                await browser.get(two.make_url(f"/?token={second.token}"))
                assert (await browser.get(one.make_url("/api/runs"))).status == 200
                assert (await browser.get(two.make_url("/api/runs"))).status == 200
                values = [c.value for c in jar]
                assert len(values) == 2
                assert first.token not in values and second.token not in values

    asyncio.run(go())


@pytest.mark.parametrize("planted", ["manifest.json", "results.json.journal.jsonl"])
def test_a_file_planted_as_a_link_to_dev_zero_is_never_read(
    project: Path, invoke: Invoke, planted: str
) -> None:
    """A manifest or journal planted as a symlink to /dev/zero: the home's feed, the
    run's page and `eval list --local` answer at once (nothing is read without limit)."""
    run = project / ".osmosis" / "evals" / "first"
    target = run / planted
    if target.exists():
        target.unlink()
    target.symlink_to("/dev/zero")
    viewer = Viewer(project)

    async def check(client: TestClient[Any, Any]) -> None:
        await client.get(f"/?token={viewer.token}")
        runs = await asyncio.wait_for(client.get("/api/runs"), 10)
        assert runs.status == 200
        page = await asyncio.wait_for(client.get("/runs/first"), 10)
        assert page.status in (200, 404)

    served(viewer, check)
    listed = invoke("eval", "list", "--local")
    assert listed.exit_code == 0 and "second" in listed.stdout


def test_a_suite_document_whose_entries_are_not_objects_is_refused(
    quickstart_project: Path, invoke: Invoke
) -> None:
    hostile = quickstart_project / ".osmosis" / "suites" / "odd"
    hostile.mkdir(parents=True)
    (hostile / "suite.json").write_text(json.dumps({"suite": "odd", "entries": [1, "x", None]}))
    report = invoke("eval", "report", str(hostile))
    assert report.exit_code == 2 and "not a suite directory" in report.stderr
    assert "Traceback" not in report.stderr
    viewer = Viewer(quickstart_project)

    async def check(client: TestClient[Any, Any]) -> None:
        await client.get(f"/?token={viewer.token}")
        assert (await client.get("/suites/odd")).status == 404
        assert (await client.get("/api/suites")).status == 200

    served(viewer, check)


def test_half_sent_requests_are_closed_within_seconds(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Requests whose headers never end hold no connection for long (a few hundred of
    them made the viewer unreachable): closed after HEADER_TIMEOUT, asking no token."""
    import socket

    from osmosis_local_runner.viewer import server

    monkeypatch.setattr(server, "HEADER_TIMEOUT", 0.3)

    async def go() -> None:
        ready = asyncio.get_running_loop().create_future()
        task = asyncio.ensure_future(server.serve(Viewer(project), ready=ready.set_result))
        url = await asyncio.wait_for(ready, 10)
        port = int(url.split(":")[2].split("/")[0])
        held = [socket.create_connection(("127.0.0.1", port), timeout=5) for _ in range(20)]
        for sock in held:
            sock.sendall(b"GET /api/runs HTTP/1.1\r\nHost: 127.0.0.1\r\n")  # never ended
        closed = await asyncio.gather(*(asyncio.to_thread(sock.recv, 100) for sock in held))
        assert closed == [b""] * 20  # the server hung up on each (within the 5 s bound)
        for sock in held:
            sock.close()
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task

    asyncio.run(go())


def test_a_port_in_use_or_an_address_not_here_is_one_line_exit_2(
    project: Path, invoke: Invoke
) -> None:
    import socket

    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        used = invoke("eval", "view", "--no-browser", "--port", str(port))
    assert used.exit_code == 2, used.stderr
    assert (
        used.stderr
        == f"error: port {port} on 127.0.0.1 is in use — pick another --port, or leave it out (a free one)\n"
    )
    far = invoke("eval", "view", "--no-browser", "--host", "192.0.2.1")  # TEST-NET: not ours
    assert far.exit_code == 2 and far.stderr.startswith("error: cannot serve on 192.0.2.1:0")
    assert len(far.stderr.splitlines()) == 1
    out_of_range = invoke("eval", "view", "--no-browser", "--port", "70000")
    assert out_of_range.exit_code == 2 and "Traceback" not in out_of_range.stderr


def test_a_review_is_written_only_with_the_pages_key_and_only_beside_the_run(
    project: Path,
) -> None:
    """Writes need the key the run's page carries in a header (another site can send the
    cookie, never read the key); the body is checked; the review lands beside the run."""
    viewer = Viewer(project)
    reviews = project / ".osmosis" / "evals" / "first" / "reviews.jsonl"

    async def check(client: TestClient[Any, Any]) -> None:
        await client.get(f"/?token={viewer.token}")
        page = await (await client.get("/runs/first")).text()
        data = json.loads(page.split('id="data">', 1)[1].split("</script>")[0])
        assert data["review"] == {"url": "/runs/first/reviews", "key": viewer.write_key}
        body = {"row": 0, "attempt": 0, "verdict": "fail", "reason": "lucky guess"}
        no_key = await client.post("/runs/first/reviews", json=body)  # the cookie alone
        assert no_key.status == 403 and not reviews.exists()
        headers = {"X-Osmosis-Key": viewer.write_key}
        bad = await client.post("/runs/first/reviews", json={"verdict": "maybe"}, headers=headers)
        assert bad.status == 400 and not reviews.exists()
        ghost = await client.post("/runs/ghost/reviews", json=body, headers=headers)
        assert ghost.status == 400
        done = await client.post("/runs/first/reviews", json=body, headers=headers)
        assert done.status == 200 and (await done.json())["verdict"] == "fail"
        assert json.loads(reviews.read_text())["reason"] == "lucky guess"
        compared = await (await client.get("/compare/first/second")).text()
        shown = json.loads(compared.split('id="data">', 1)[1].split("</script>")[0])
        assert "review" not in shown  # one run's page only
        again = await (await client.get("/runs/first")).text()
        assert "disagree on 1" in again and "lucky guess" in again  # the agreement view

    served(viewer, check)


def test_a_sweep_page_shows_the_runs_by_step_against_the_baseline(
    project: Path, invoke: Invoke
) -> None:
    for step in (10, 20):
        ran = invoke(
            *RUN, "--name", f"s-{step}", "--limit", "3", "--series", "grpo", "--step", str(step)
        )
        assert ran.exit_code == 0, ran.stderr
    viewer = Viewer(project)

    async def check(client: TestClient[Any, Any]) -> None:
        await client.get(f"/?token={viewer.token}")
        page = await client.get("/sweep?runs=second,first")
        text = await page.text()
        assert page.status == 404 and "records no series and step" in text  # never joined
        page = await client.get("/sweep?runs=s-20,s-10")
        text = await page.text()
        assert page.status == 200 and "grpo: 2 steps" in text
        assert "default-src 'none'" in text and "<script" not in text  # no script at all
        assert 'data-testid="against"' in text and 'data-testid="first-solved"' in text
        assert (await client.get("/sweep?runs=first")).status == 404  # two runs or more
        assert (await client.get("/sweep?runs=first,ghost")).status == 404

    served(viewer, check)


def test_the_json_api_pages_filters_and_opens_rows_on_the_library(project: Path) -> None:
    """Issue 46: what a script or another page reads — a run, its rows page by page with
    filters and search, a row whole, a comparison — behind the same token."""
    viewer = Viewer(project)

    async def get(client: TestClient[Any, Any], path: str) -> Any:
        answer = await client.get(path)
        assert answer.status == 200, (path, await answer.text())
        return await answer.json()

    async def check(client: TestClient[Any, Any]) -> None:
        assert (await client.get("/api/runs/first")).status == 403
        await client.get(f"/?token={viewer.token}")
        run = await get(client, "/api/runs/first")
        assert run["name"] == "first" and run["summary"]["total_rows"] == 3
        assert run["reviews"] == []
        page = await get(client, "/api/runs/first/rows?limit=2")
        assert [r["index"] for r in page["rows"]] == [0, 1] and page["next_offset"] == 2
        assert page["matched"] == 3 and page["rows"][0]["attempts"][0]["passed"] is True
        rest = await get(client, "/api/runs/first/rows?offset=2&limit=2")
        assert [r["index"] for r in rest["rows"]] == [2] and rest["next_offset"] is None
        assert (await get(client, "/api/runs/first/rows?status=failed"))["matched"] == 0
        assert (await get(client, "/api/runs/first/rows?status=passed"))["matched"] == 3
        found = await get(client, "/api/runs/first/rows?q=calculator")  # in the transcript
        assert found["matched"] == 3
        assert (await get(client, "/api/runs/first/rows?q=no%20such%20words"))["matched"] == 0
        row = await get(client, "/api/runs/first/rows/1")
        assert row["index"] == 1 and len(row["attempts"]) == 3
        assert row["attempts"][0]["messages"][0]["role"] == "system"
        assert row["attempts"][0]["calls"][0]["sent"] >= 1
        compared = await get(client, "/api/compare/first/second")
        assert "grader" in compared["eval_fns"]
        for bad, status in (
            ("/api/runs/first/rows/99", 404),
            ("/api/runs/first/rows/x", 400),
            ("/api/runs/first/rows?status=odd", 400),
            ("/api/runs/first/rows?offset=-1", 400),
            ("/api/runs/ghost", 404),
        ):
            assert (await client.get(bad)).status == status, bad

    served(viewer, check)


def test_a_review_through_the_viewer_and_through_python_writes_the_same_line(
    project: Path,
) -> None:
    """One policy, two doors: the same review sent from a run's page and given to
    ``load_run().review`` lands as the same line (its time aside)."""
    from osmosis_local_runner.api import load_run

    viewer = Viewer(project)
    said = {
        "row": 1,
        "attempt": 2,
        "verdict": "fail",
        "reason": "lucky",
        "tag": "hack",
        "author": "ada",
    }

    async def check(client: TestClient[Any, Any]) -> None:
        await client.get(f"/?token={viewer.token}")
        sent = await client.post(
            "/runs/first/reviews", json=said, headers={"X-Osmosis-Key": viewer.write_key}
        )
        assert sent.status == 200

    served(viewer, check)
    load_run("first").review(**said)  # type: ignore[arg-type]
    lines = [
        json.loads(x)
        for x in (project / ".osmosis/evals/first/reviews.jsonl").read_text().splitlines()
    ]
    for line in lines:
        line.pop("at")
    assert lines[0] == lines[1] == said
