"""The HTML report in a real headless Chromium (Playwright): it loads offline with no
console errors, shows the documents' numbers, filters, paginates and opens transcripts.

Chromium comes from the system (Debian's ``chromium``, which .ci/run installs); the tests
skip, saying why, where no browser can be found.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from osmosis_local_runner.results.documents.document import document_head, write_document
from osmosis_local_runner.results.documents.records import AttemptRecord
from tests.e2e.conftest import osmosis_command

pytestmark = pytest.mark.slow

QUICKSTART = Path(__file__).resolve().parents[2] / "examples" / "quickstart"
ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


def chromium_path() -> str | None:
    for candidate in (os.environ.get("OSMOSIS_CHROMIUM"), "chromium", "chromium-browser"):
        if candidate and (found := shutil.which(candidate)):
            return found
    return None


def expect(locator: Any) -> Any:
    from playwright.sync_api import expect as playwright_expect

    return playwright_expect(locator)


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    sync_api = pytest.importorskip("playwright.sync_api", reason="playwright is not installed")
    path = chromium_path()
    if path is None:
        pytest.skip("no Chromium on this machine (apt-get install chromium; .ci/run does)")
    with sync_api.sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=path, args=ARGS)
        yield launched
        launched.close()


class Page:
    """A page with its console errors and every request it made recorded."""

    def __init__(self, browser: Any, path: Path) -> None:
        self.errors: list[str] = []
        self.requests: list[str] = []
        self.context = browser.new_context()
        self.page = self.context.new_page()
        self.page.on("console", lambda m: self.errors.append(m.text) if m.type == "error" else None)
        self.page.on("pageerror", lambda e: self.errors.append(str(e)))
        self.page.on("dialog", lambda d: (self.errors.append(f"dialog: {d.message}"), d.dismiss()))
        self.page.on("request", lambda r: self.requests.append(r.url))
        self.page.goto(path.as_uri())
        self.page.wait_for_selector("body[data-ready='1']", timeout=10_000)

    def text(self, selector: str) -> str:
        return str(self.page.text_content(selector))

    def statuses(self) -> list[str]:
        return self.page.eval_on_selector_all("tr.row", "rows => rows.map(r => r.dataset.status)")

    def close(self) -> None:
        self.context.close()


class Result:
    def __init__(self, done: subprocess.CompletedProcess[str]) -> None:
        self.exit_code, self.stdout, self.stderr = done.returncode, done.stdout, done.stderr

    def json(self) -> Any:
        return json.loads(self.stdout)


def invoke(*args: str) -> Result:
    """The installed CLI in a subprocess (Playwright's sync API owns this thread's loop)."""
    return Result(
        subprocess.run([*osmosis_command(), *args], capture_output=True, text=True, timeout=120)
    )


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = tmp_path / "qs"
    shutil.copytree(QUICKSTART, root, ignore=shutil.ignore_patterns(".osmosis"))
    monkeypatch.chdir(root)
    return root


def test_a_vs_b_report_shows_the_numbers_filters_and_transcripts(
    browser: Any, project: Path
) -> None:
    for name, model in (("a", "mock/calculator"), ("b", "mock/flaky-calculator")):
        ran = invoke(
            "eval",
            "run",
            "configs/eval/quickstart.toml",
            "--model",
            model,
            "-o",
            f"{name}.json",
            "--quiet",
        )
        assert ran.exit_code == 0, ran.stderr
    made = invoke("eval", "report", "a.json", "b.json", "-o", "out/report.html")
    assert made.exit_code == 0, made.stderr
    docs = [json.loads((project / f"{n}.json").read_text()) for n in ("a", "b")]
    page = Page(browser, project / "out" / "report.html")
    try:
        assert page.errors == []
        assert all(url.startswith("file://") for url in page.requests)  # nothing fetched
        for i, doc in enumerate(docs):
            stats = doc["summary"]["eval_fns"]["grader"]
            half = (stats["ci_high"] - stats["ci_low"]) / 2  # the mean with its interval
            assert page.text(f"[data-testid=mean-{i}]") == f"{stats['mean']:.3f} ± {half:.3f}"
            assert page.text(f"[data-testid=pass_at_1-{i}]") == f"{stats['pass_at_1']:.3f}"
            assert page.text(f"[data-testid=rows-{i}]") == str(doc["summary"]["total_rows"])
        assert page.text("[data-testid=row-count]") == "20 of 20 rows"
        compared = invoke("eval", "compare", "a.json", "b.json", "--json").json()["data"][
            "eval_fns"
        ]
        assert page.text("[data-testid=diff-grader]") == f"{compared['grader']['diff']:+.3f}"
        assert page.page.locator("[data-testid=histogram] rect").count() > 0
        assert page.page.locator("[data-testid=pass-at-k] polyline").count() == 2

        # failed only, on run b: exactly b's rows that do not pass
        page.page.select_option("#run", "1")
        page.page.check("#filter-failed")
        failing = [
            row["row_index"]
            for row in docs[1]["rows"]
            if sum(r["scores"]["grader"] >= 1.0 for r in row["runs"]) * 2 <= len(row["runs"])
        ]
        assert failing and set(page.statuses()) == {"failed"}
        shown = page.page.eval_on_selector_all("tr.row", "rs => rs.map(r => +r.dataset.index)")
        assert shown == failing
        assert page.text("[data-testid=row-count]") == f"{len(failing)} of 20 rows"

        page.page.check("#filter-flipped")
        flips = compared["grader"]["flipped_to_fail"] + compared["grader"]["flipped_to_pass"]
        assert page.page.locator("tr.row").count() == flips

        # a transcript opens as a chat: every attempt of both runs, with its messages
        page.page.locator("tr.row").first.click()
        transcript = page.page.locator(".transcript")
        transcript.wait_for()
        assert transcript.locator(".attempt").count() == 6  # n=3 in each run
        assert transcript.locator(".msg.assistant").count() == 6
        assert transcript.locator(".msg.user").first.text_content().startswith("user")  # type: ignore[union-attr]

        # the keyboard works too: Enter on a focused row closes and reopens it
        first = page.page.locator("tr.row").first
        first.focus()
        page.page.keyboard.press("Enter")
        assert page.page.locator(".transcript").count() == 0
        page.page.keyboard.press("Enter")
        assert page.page.locator(".transcript").count() == 1
        assert first.get_attribute("aria-expanded") == "true"

        page.page.check("input[value=all]")
        page.page.fill("#search", "43 + 21")
        expect(page.page.locator("[data-testid=row-count]")).to_have_text("1 of 20 rows")
        assert page.errors == []
    finally:
        page.close()


def _big_document(path: Path, rows: int) -> None:
    records: dict[int, list[AttemptRecord]] = {}
    for i in range(rows):
        answer = "<img src=x onerror=alert(1)><script>alert(2)</script>" if i == 7 else str(i)
        messages = [
            {"role": "system", "content": "You are a calculator."},
            {"role": "user", "content": f"What is {i} + 0?"},
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {
                        "id": "c1",
                        "type": "function",
                        "function": {"name": "add", "arguments": json.dumps({"a": i, "b": 0})},
                    }
                ],
            },
            {"role": "tool", "tool_call_id": "c1", "content": str(i)},
            {"role": "assistant", "content": answer},
        ]
        records[i] = [
            AttemptRecord(
                row_index=i,
                run_index=0,
                row_digest=f"d{i}",
                success=i % 50 != 3,
                scores={"grader": 0.0 if i % 5 == 0 or i % 50 == 3 else 1.0},
                duration_ms=120,
                tokens=40,
                error="workflow: RuntimeError: boom" if i % 50 == 3 else None,
                answer=answer,
                transcript=json.dumps(messages),
            )
        ]
    config = {
        "model": "mock/big",
        "n_runs": 1,
        "pass_threshold": 1.0,
        "eval_fns": ["grader"],
        "dataset": "big.jsonl",
    }
    head = document_head(
        config, records, ["grader"], n=1, pass_threshold=1.0, duration_ms=60_000, status="finished"
    )
    write_document(path, head, records)


def test_a_2000_row_report_loads_paginated_and_keeps_user_text_inert(
    browser: Any, tmp_path: Path
) -> None:
    results = tmp_path / "big.json"
    _big_document(results, 2000)
    made = invoke("eval", "report", str(results), "-o", str(tmp_path / "big.html"))
    assert made.exit_code == 0, made.stderr
    page = Page(browser, tmp_path / "big.html")
    try:
        assert page.errors == []
        assert page.page.locator("tr.row").count() == 50  # one page, not 2,000 rows
        assert page.text("[data-testid=page]") == "page 1 of 40"
        page.page.click("#next")
        assert page.text("[data-testid=page]") == "page 2 of 40"
        assert page.page.locator("tr.row").first.get_attribute("data-index") == "50"

        page.page.check("#filter-error")
        assert page.text("[data-testid=row-count]") == "40 of 2000 rows"
        assert set(page.statuses()) == {"error"}
        # an errored row says why in the table itself, before it is opened
        first_answer = page.page.locator("tr.row td.answer").first
        assert "RuntimeError: boom" in str(first_answer.text_content())
        assert "err" in str(first_answer.get_attribute("class"))

        # a model answer full of markup is shown as text: nothing runs, nothing loads
        page.page.check("input[value=all]")
        page.page.fill("#search", "onerror")
        expect(page.page.locator("[data-testid=row-count]")).to_have_text("1 of 2000 rows")
        page.page.locator("tr.row").first.click()
        transcript = page.page.locator(".transcript")
        transcript.wait_for()
        assert "<script>alert(2)</script>" in str(transcript.text_content())
        assert transcript.locator("img, script").count() == 0
        assert "→ add(" in str(transcript.locator(".call").first.text_content())
        assert page.errors == [] and all(u.startswith("file://") for u in page.requests)
    finally:
        page.close()


def test_only_the_reports_own_script_runs(browser: Any, project: Path) -> None:
    """Defence in depth: the CSP allows the page's script by its hash, so markup injected
    into the page (were escaping ever to fail) cannot run a script of its own."""
    ran = invoke("eval", "run", "configs/eval/quickstart.toml", "-o", "a.json", "--quiet")
    assert ran.exit_code == 0, ran.stderr
    assert invoke("eval", "report", "a.json", "-o", "report.html").exit_code == 0
    report = project / "report.html"
    page_text = report.read_text()
    policy = page_text.split('http-equiv="Content-Security-Policy" content="', 1)[1].split('"')[0]
    assert (
        "script-src 'sha256-" in policy and "'unsafe-inline'" not in policy.split("script-src")[1]
    )
    page = Page(browser, report)  # our script ran (data-ready is set by it)
    assert page.errors == []
    page.close()
    injected = project / "injected.html"
    injected.write_text(
        page_text.replace(
            "<main>",
            "<main><script>document.body.dataset.pwned='1'</script>"
            "<img src=x onerror=\"document.body.dataset.pwned='2'\">",
            1,
        )
    )
    hostile = Page(browser, injected)
    assert hostile.page.evaluate("document.body.dataset.pwned") is None
    assert any("Content Security Policy" in e for e in hostile.errors)
    hostile.close()


# ------------------------------------------------------------------ issue 24: dig into rows


def shot(page: Page, name: str, directory: Path, selector: str | None = None) -> bytes:
    """A screenshot of a view (kept under ``directory``; $OSMOSIS_SCREENSHOTS keeps them
    after the run): never blank, and taken with no console error."""
    target = page.page.locator(selector).first if selector else page.page
    png = target.screenshot(path=str(directory / f"{name}.png"))
    keep = os.environ.get("OSMOSIS_SCREENSHOTS")
    if keep:
        Path(keep).mkdir(parents=True, exist_ok=True)
        (Path(keep) / f"{name}.png").write_bytes(png)
    blank = page.context.new_page()
    blank.set_content("<html><body></body></html>")
    empty = blank.screenshot()
    blank.close()
    assert png[:8] == b"\x89PNG\r\n\x1a\n" and len(png) > 3 * len(empty), name
    assert page.errors == [], (name, page.errors)
    return png


def _two_runs(project: Path) -> list[dict[str, Any]]:
    for name, model in (("a", "mock/calculator"), ("b", "mock/flaky-calculator")):
        ran = invoke(
            "eval",
            "run",
            "configs/eval/quickstart.toml",
            "--model",
            model,
            "-o",
            f"{name}.json",
            "--quiet",
        )
        assert ran.exit_code == 0, ran.stderr
    return [json.loads((project / f"{n}.json").read_text()) for n in ("a", "b")]


def _means(doc: dict[str, Any]) -> dict[int, float]:
    return {
        row["row_index"]: sum(r["scores"]["grader"] for r in row["runs"]) / len(row["runs"])
        for row in doc["rows"]
    }


def test_rows_sort_link_slice_and_open_side_by_side(
    browser: Any, project: Path, tmp_path: Path
) -> None:
    docs = _two_runs(project)
    made = invoke("eval", "report", "a.json", "b.json", "--by", "difficulty", "-o", "r.html")
    assert made.exit_code == 0, made.stderr
    shots = tmp_path / "shots"
    shots.mkdir()
    a, b = _means(docs[0]), _means(docs[1])
    diff = {i: b[i] - a[i] for i in a}
    page = Page(browser, project / "r.html")
    try:
        shot(page, "overview", shots)
        # the biggest regressions first: sorted by B − A, ascending
        page.page.click("button[data-sort=diff]")
        shown = page.page.eval_on_selector_all("tr.row", "rs => rs.map(r => +r.dataset.index)")
        assert [round(diff[i], 6) for i in shown] == sorted(round(d, 6) for d in diff.values())
        assert page.page.get_attribute("th:has(button[data-sort=diff])", "aria-sort") == "ascending"
        page.page.click("button[data-sort=diff]")
        shown = page.page.eval_on_selector_all("tr.row", "rs => rs.map(r => +r.dataset.index)")
        assert diff[shown[0]] == max(diff.values())
        first = page.page.locator("tr.row").first
        assert first.locator("td.expected").text_content() == docs[0]["rows"][shown[0]]["expected"]

        # A and B side by side, aligned by attempt; the shared system prompt once
        page.page.click("button[data-sort=diff]")  # worst first again
        worst = page.page.locator("tr.row").first
        index = int(str(worst.get_attribute("data-index")))
        worst.click()
        transcript = page.page.locator(".transcript")
        transcript.wait_for()
        assert transcript.locator(".side-by-side .attempt").count() == 6
        assert transcript.locator(".msg.system").count() == 1
        assert transcript.locator(".strip .dot").count() == 6
        answers = [[r["answer"] for r in doc["rows"][index]["runs"]] for doc in docs]
        differing = sum(x != y for x, y in zip(*answers, strict=True))
        assert differing and transcript.locator(".attempt.differs").count() == 2 * differing
        assert page.page.evaluate("location.hash") == f"#row={index}"
        shot(page, "side-by-side", shots, ".transcript")

        # the keyboard moves between rows
        page.page.locator("tr.row").nth(1).focus()
        page.page.keyboard.press("ArrowDown")
        assert page.page.evaluate("document.activeElement.dataset.index") == page.page.locator(
            "tr.row"
        ).nth(2).get_attribute("data-index")

        # slices: opened on difficulty (--by), the numbers eval compare --by prints
        compared = invoke(
            "eval", "compare", "a.json", "b.json", "--by", "difficulty", "--json"
        ).json()["data"]["slices"]["values"]
        assert page.page.input_value("#slice-by") == "difficulty"
        lines = page.page.locator(".slice-table tbody tr")
        assert lines.count() == 2
        easy = lines.first.locator("td")
        assert easy.first.text_content() == "easy"
        grader = compared[0]["eval_fns"]["grader"]
        assert f"{grader['diff']:+.3f}" in str(lines.first.text_content())
        assert page.page.locator(".slice-chart:not([hidden]) svg").count() == 2
        shot(page, "slices", shots, "#slices")
        lines.nth(1).click()  # medium: its rows only
        assert page.text("[data-testid=row-count]") == "6 of 20 rows"
        assert page.errors == []
    finally:
        page.close()

    # a deep link opens its row, whatever page it is on
    linked = project / "r.html"
    page = Page(browser, linked)
    try:
        page.page.goto("about:blank")  # a fresh load, not a hash change
        page.page.goto(linked.as_uri() + "#row=17")
        page.page.wait_for_selector("body[data-ready='1']")
        row = page.page.locator("tr.row[data-index='17']")
        assert row.get_attribute("aria-expanded") == "true"
        assert page.page.evaluate("document.activeElement.dataset.index") == "17"
        assert page.page.locator(".transcript").count() == 1
        page.page.locator("tr.row[data-index='3'] a.permalink").click()
        assert page.page.evaluate("location.hash") == "#row=3"
        assert page.page.locator("tr.row[data-index='3']").get_attribute("aria-expanded") == "true"
        shot(page, "deep-link", shots)
    finally:
        page.close()


def test_a_suite_report_ranks_entries_and_charts_the_sweep(
    browser: Any, project: Path, tmp_path: Path
) -> None:
    ran = invoke("eval", "run", "configs/eval/suite.toml", "-o", "suite", "--limit", "4", "--quiet")
    assert ran.exit_code == 0, ran.stderr
    assert invoke("eval", "report", "suite", "-o", "suite.html").exit_code == 0
    page = Page(browser, project / "suite.html")
    try:
        assert page.text("[data-testid=title]") == "suite quickstart-suite"
        assert page.page.locator("[data-testid=suite-ranking] tbody tr").count() == 5
        assert page.page.locator("[data-testid=setting-chart]").count() == 4  # model, n × 2
        shots = tmp_path / "shots"
        shots.mkdir()
        shot(page, "suite", shots)
    finally:
        page.close()


def test_a_reasoning_models_report_shows_its_thinking_tokens_and_cost(
    browser: Any, project: Path
) -> None:
    """Issue 44: each turn's reasoning collapsed under it with its tokens, every attempt's
    and call's usage, and the run's output tokens, truncation and cost on its card."""
    (project / "prices.toml").write_text(
        '[models."mock/thinking-calculator"]\ninput = 1.0\noutput = 4.0\ncache_read = 0.1\n'
    )
    ran = invoke(
        "eval",
        "run",
        "configs/eval/quickstart.toml",
        "--model",
        "mock/thinking-calculator",
        "--reasoning-effort",
        "high",
        "--prices",
        "prices.toml",
        "--limit",
        "4",
        "-o",
        "think.json",
        "--quiet",
    )
    assert ran.exit_code in (0, 1), ran.stderr
    usage = json.loads((project / "think.json").read_text())["summary"]["usage"]
    made = invoke("eval", "report", "think.json", "-o", "out/think.html")
    assert made.exit_code == 0, made.stderr
    page = Page(browser, project / "out" / "think.html")
    try:
        assert page.errors == []
        assert page.text("[data-testid=output_tokens-0]") == f"{usage['output_tokens']:,}"
        assert page.text("[data-testid=cost-0]") == f"${usage['cost_usd']:.4f}"
        page.page.locator("tr.row").first.click()
        transcript = page.page.locator(".transcript")
        transcript.wait_for()
        thought = transcript.locator(".msg.assistant details.reasoning").first
        summary = str(thought.locator("summary").text_content())
        assert summary.startswith("reasoning · ") and summary.endswith(" tokens")
        assert not thought.locator("pre").is_visible()  # collapsed until asked
        thought.locator("summary").click()
        assert str(thought.locator("pre").text_content()).startswith("Let me work it out")
        title = str(transcript.locator(".attempt h4").first.text_content())
        assert " out (" in title and "reasoning)" in title and "$" in title
        transcript.locator(".tab[data-tab='model calls']").first.click()
        # the tab chosen is every attempt's at once (a reader compares their calls)
        assert transcript.locator("[data-panel='model calls']:visible").count() == (
            transcript.locator(".attempt").count()
        )
        calls = transcript.locator("details.calls").first
        calls.locator("summary").first.click()
        assert "reasoning)" in str(calls.locator(".call-head").first.text_content())
        shot = page.page.screenshot(full_page=False)
        assert len(shot) > 20_000
        if keep := os.environ.get("OSMOSIS_SCREENSHOTS"):
            Path(keep).mkdir(parents=True, exist_ok=True)
            (Path(keep) / "report-reasoning.png").write_bytes(shot)
    finally:
        page.close()
