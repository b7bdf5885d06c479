"""``osmosis eval view`` in a real headless Chromium: the home lists every run and takes
in a new one without a reload, filters and sorts, opens a run's report and a comparison
of two; no console error; a page without the token sees nothing."""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.child_output import Child
from tests.e2e.conftest import osmosis_command
from tests.e2e.test_report_browser import browser, expect, invoke, project
from tests.helpers import SUITE_RUN

pytestmark = pytest.mark.slow
__all__ = ["browser", "project"]  # fixtures used here, defined beside the report's tests

RUN = ["eval", "run", "configs/eval/quickstart.toml", "--model", "mock/calculator", "-q"]


@pytest.fixture
def viewer_url(project: Path) -> Iterator[str]:
    for step in (100, 200):  # a series: each run records its step
        ran = invoke(
            *RUN, "--name", f"ckpt-{step}", "--limit", "3", "--series", "grpo", "--step", str(step)
        )
        assert ran.exit_code == 0, ran.stderr
    with Child([*osmosis_command(), "eval", "view", "--no-browser"]) as child:
        yield child.err.wait_for(r"http://\S+\?token=\S+", 30).group(0)
        child.proc.terminate()


def snap(page: Any, name: str) -> None:
    """A screenshot of a view, never blank ($OSMOSIS_SCREENSHOTS keeps it: docs/images)."""
    png = page.screenshot(full_page=False)
    assert png[:8] == b"\x89PNG\r\n\x1a\n" and len(png) > 20_000, name  # a blank page is ~5 KB
    if keep := os.environ.get("OSMOSIS_SCREENSHOTS"):
        Path(keep).mkdir(parents=True, exist_ok=True)
        (Path(keep) / f"{name}.png").write_bytes(png)


def test_home_lists_runs_live_and_opens_reports(browser: Any, viewer_url: str) -> None:
    errors: list[str] = []
    context = browser.new_context()
    page = context.new_page()
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda e: errors.append(str(e)))
    try:
        page.goto(viewer_url)
        rows = page.locator("#body tr")
        expect(rows).to_have_count(2)
        assert "token" not in page.url  # kept as a cookie, not in the address bar

        # a run made while the page is open appears without a reload
        ckpt = ["--series", "grpo", "--step", "300"]
        assert invoke(*RUN, "--name", "ckpt-300", "--limit", "2", *ckpt).exit_code == 0
        expect(rows).to_have_count(3)
        page.fill("#filter", "ckpt-300")
        expect(rows).to_have_count(1)
        page.fill("#filter", "")
        # a run of another series joins the table, not the chart: a chart plots one
        # series by the step each run recorded; a run in no series is never plotted,
        # whatever a number in its name says
        other = [
            "eval",
            "run",
            "configs/eval/thinking.toml",
            "-q",
            "--name",
            "thinking-1",
            "--limit",
            "2",
            "--series",
            "effort",
            "--step",
            "1",
        ]
        assert invoke(*other).exit_code == 0
        assert invoke(*RUN, "--name", "mellow-walrus-44", "--limit", "2").exit_code == 0
        expect(rows).to_have_count(5)
        expect(page.locator("#group option")).to_have_count(2)
        page.select_option("#group", "grpo")
        note = str(page.text_content("#group-note"))
        assert "1 run of other series" in note and "1 in no series" in note, note
        assert page.locator("#chart text.xtick").all_text_contents() == ["100", "200", "300"]
        sweep_link = page.locator("[data-testid=sweep]")
        assert sweep_link.text_content() == "open grpo as a sweep (3 steps)"
        assert "runs=ckpt-100,ckpt-200,ckpt-300" in str(sweep_link.get_attribute("href"))
        # the chosen statistic along the series: a point a step, linked to its run
        assert page.locator("#chart circle").count() == 3
        assert page.locator("#chart a").first.get_attribute("href") == "runs/ckpt-100"
        snap(page, "viewer-home")  # the mean along the series
        page.select_option("#stat", "attempts")
        tips = page.locator("#chart circle title").all_text_contents()
        assert tips == [
            "step 100 (ckpt-100): 9",
            "step 200 (ckpt-200): 9",
            "step 300 (ckpt-300): 6",
        ]  # rows × n (3)
        page.click("th[data-key=name]")
        assert rows.first.get_attribute("data-name") == "ckpt-100"

        # ticked newest first, still compared oldest first: A is the baseline, and the
        # page's title and its comparison section say the same
        page.check("tr[data-name=ckpt-200] input")
        page.check("tr[data-name=ckpt-100] input")
        assert "ckpt-100 (A, older) vs ckpt-200 (B)" in str(page.text_content("#compare"))
        page.click("#compare")
        page.wait_for_selector("body[data-ready='1']", timeout=10_000)
        assert "ckpt-100 vs ckpt-200" in str(page.text_content("[data-testid=title]"))
        assert page.text_content("section.comparison h2") == "ckpt-100 vs ckpt-200"
        assert not errors, errors  # no console errors (the favicon is served)
        snap(page, "viewer-compare")

        page.goto(viewer_url.split("?")[0] + "runs/ckpt-300")
        page.wait_for_selector("body[data-ready='1']", timeout=10_000)
        assert page.locator("tr.row").count() == 2
        # transcript depth: an attempt's model calls, timed, the raw JSON on demand
        page.locator("tr.row").first.click()
        # an attempt's tabs: the timeline above them, its model calls in their own tab
        first = page.locator(".transcript .attempt").first
        # its timeline: the model call, then the grading, each timed; a line sums them
        assert first.locator(".timeline .seg.model").count() == 1
        assert first.locator(".timeline .seg.grading").count() == 1
        legend = str(first.locator(".timeline-legend").text_content())
        assert re.fullmatch(
            r"1 model call \d+\.\d{3}s · grading \d+\.\d{3}s · attempt "
            r"\d+\.\d{3}s",
            legend,
        ), legend
        assert first.locator(".tab").all_text_contents() == [
            "transcript",
            "model calls",
            "scoring",
            "metadata",
            "raw JSON",
        ]
        first.locator(".tab[data-tab='scoring']").click()
        assert "grader: 1.000 · passed" in str(first.locator("[data-panel=scoring]").text_content())
        first.locator(".tab[data-tab='raw JSON']").click()
        assert '"scores"' in str(first.locator("pre.raw-attempt").text_content())
        first.locator(".tab[data-tab='model calls']").click()
        calls = page.locator(".transcript details.calls").first
        calls.locator("summary").first.click()
        assert re.match(
            r"1 model call · \d+\.\d{3}s in calls",
            str(calls.locator("summary").first.text_content()),
        )
        raw = calls.locator("details.raw")
        raw.locator("summary").click()
        answer = raw.locator("pre").nth(1).text_content() or ""
        assert answer.startswith("answer:") and '"choices"' in answer
        snap(page, "viewer-model-calls")

        # a suite run appears on the home and opens as its report
        suite = SUITE_RUN
        assert invoke(*suite).exit_code == 0
        page.goto(viewer_url.split("?")[0])
        expect(page.locator("#suites tr")).to_have_count(1)
        page.click("#suites a")
        page.wait_for_selector("body[data-ready='1']", timeout=10_000)
        assert "quickstart-suite" in page.content()
        snap(page, "viewer-suite")
        assert errors == []
    finally:
        context.close()

    stranger = browser.new_context()  # no token, no cookie
    try:
        answer = stranger.new_page().goto(viewer_url.split("?")[0])
        assert answer is not None and answer.status == 403
    finally:
        stranger.close()


def test_a_stopped_run_says_so_with_how_far_it_got(
    browser: Any, project: Path, viewer_url: str
) -> None:
    # a run killed after 4 of its 9 attempts: its journal, no document (issue 43)
    runs = project / ".osmosis" / "evals"
    killed = runs / "ckpt-150"
    killed.mkdir()
    for name in ("manifest.json", "progress.json"):
        (killed / name).write_bytes((runs / "ckpt-100" / name).read_bytes())
    journal = (runs / "ckpt-100" / "results.json.journal.jsonl").read_text().splitlines()
    (killed / "results.json.journal.jsonl").write_text("\n".join(journal[:5]) + "\n")
    context = browser.new_context()
    page = context.new_page()
    try:
        page.goto(viewer_url)
        row = page.locator("tr[data-name=ckpt-150]")
        expect(row).to_have_count(1)
        assert row.get_attribute("data-status") == "stopped"
        assert row.locator("td.attempts").text_content() == "4 / 9"
        assert page.locator("tr[data-name=ckpt-100] td.attempts").text_content() == "9"
        snap(page, "viewer-stopped")
    finally:
        context.close()


def test_a_running_runs_page_grows_in_place_and_keeps_the_readers_place(
    browser: Any, project: Path, viewer_url: str
) -> None:
    """Issue 46: the page of a running run no longer reloads itself (the search, the open
    row and its #row= link were lost every 5 s); it takes the new attempts in place."""
    from osmosis_local_runner.run.session.rundir import RunDirectory

    runs = project / ".osmosis" / "evals"
    growing = runs / "ckpt-250"
    growing.mkdir()
    for name in ("manifest.json", "progress.json"):
        (growing / name).write_bytes((runs / "ckpt-100" / name).read_bytes())
    journal = (runs / "ckpt-100" / "results.json.journal.jsonl").read_text().splitlines()
    target = growing / "results.json.journal.jsonl"
    target.write_text("\n".join(journal[:4]) + "\n")  # the header and row 0's three attempts
    context = browser.new_context()
    page = context.new_page()
    errors: list[str] = []
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    try:
        with RunDirectory(runs, "ckpt-250").locked():  # an invocation runs it now
            page.goto(viewer_url)
            page.goto(viewer_url.split("?")[0] + "runs/ckpt-250")
            page.wait_for_selector("body[data-ready='1'][data-live='on']", timeout=10_000)
            assert page.locator("tr.row").count() == 1
            page.fill("#search", "what")
            page.locator("tr.row").first.click()  # opened: #row=0
            assert page.url.endswith("#row=0")
            with target.open("a") as handle:  # the run finishes more attempts
                handle.write("\n".join(journal[4:]) + "\n")
            expect(page.locator("tr.row")).to_have_count(3, timeout=10_000)
            assert page.input_value("#search") == "what"  # the reader's place is kept
            assert page.url.endswith("#row=0")
            assert page.locator(".transcript").count() == 1  # row 0 is still open
            snap(page, "viewer-live")
        expect(page.locator("body")).to_have_attribute("data-live", "ended", timeout=10_000)
        assert errors == []
    finally:
        context.close()


def test_a_run_page_leads_home_and_walks_its_rows_by_button_and_key(
    browser: Any, viewer_url: str
) -> None:
    """Issue 46: breadcrumbs home, previous / next row, keys (j/k, Enter, Esc, /)."""
    context = browser.new_context()
    page = context.new_page()
    try:
        page.goto(viewer_url)
        page.goto(viewer_url.split("?")[0] + "runs/ckpt-200")
        page.wait_for_selector("body[data-ready='1']", timeout=10_000)
        crumbs = page.locator("[data-testid=crumbs]")
        assert crumbs.text_content() == "runs › ckpt-200"
        page.keyboard.press("j")  # from nowhere: the first row
        page.keyboard.press("Enter")
        assert page.url.endswith("#row=0")
        page.click("[data-testid=next-row]")
        assert page.url.endswith("#row=1") and page.locator(".transcript").count() == 1
        snap(page, "viewer-run")  # breadcrumbs, an open row with previous / next
        assert page.locator("[data-testid=prev-row]").is_enabled()
        page.click("[data-testid=prev-row]")
        assert page.url.endswith("#row=0")
        page.keyboard.press("Escape")  # closes the open row
        assert page.locator(".transcript").count() == 0
        page.keyboard.press("/")
        assert page.evaluate("document.activeElement.id") == "search"
        # the search reads transcripts too: the system message holds this, no prompt does
        page.keyboard.type("you are a calculator")
        expect(page.locator("[data-testid=row-count]")).to_contain_text("3 of 3 rows")
        page.fill("#search", "no such words")
        expect(page.locator("[data-testid=row-count]")).to_contain_text("0 of 3 rows")
        page.keyboard.press("Escape")  # leaves the search
        crumbs.locator("a").click()
        page.wait_for_selector("#body tr")
        assert page.url.rstrip("/").endswith(viewer_url.split("?")[0].rstrip("/"))
    finally:
        context.close()


def test_marking_what_the_grader_got_wrong(browser: Any, project: Path, viewer_url: str) -> None:
    """Issue 46: an attempt marked fail with a reason from its page; the review shows under
    it at once and, on the page, where reviewer and grader disagree."""
    context = browser.new_context()
    page = context.new_page()
    errors: list[str] = []
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    try:
        page.goto(viewer_url)
        page.goto(viewer_url.split("?")[0] + "runs/ckpt-100#row=1")
        page.wait_for_selector("body[data-ready='1']", timeout=10_000)
        form = page.locator("[data-testid=review-form]").first
        form.locator("select").select_option("fail")
        form.locator("input[aria-label='reason or comment']").fill("right answer, no working")
        form.locator("input[aria-label=tag]").fill("reward-hack?")
        form.locator("button").click()
        review = page.locator(".attempt .review").first
        expect(review).to_contain_text("reviewed: fail [reward-hack?] — right answer, no working")
        snap(page, "viewer-review")
        page.reload()
        page.wait_for_selector("body[data-ready='1']", timeout=10_000)
        agreement = page.locator("[data-testid=agreement]")
        expect(agreement).to_contain_text("1 attempt(s) reviewed")
        expect(agreement).to_contain_text("disagree on 1")
        page.check("#filter-reviewed")  # only the rows people said something of
        expect(page.locator("[data-testid=row-count]")).to_contain_text("1 of 3 rows")
        page.evaluate("location.hash = '#row=1&attempt=2'")  # an attempt's own address
        expect(page.locator(".attempt[data-attempt='2']")).to_have_class(re.compile("linked"))
        page.select_option("#tag", "reward-hack?")  # rows by people's tag
        expect(page.locator("[data-testid=row-count]")).to_contain_text("1 of 3 rows")
        # scored with people's verdicts: the page says so and its mean moves; a comparison
        # changes with it too
        base = viewer_url.split("?")[0]
        graded = page.text_content("[data-testid=mean-0]")
        page.click("[data-testid=verdicts-toggle]")
        page.wait_for_selector("body[data-ready='1']", timeout=10_000)
        assert page.url.endswith("/runs/ckpt-100?reviewed=1")
        expect(page.locator("[data-testid=reviewed-note]")).to_contain_text(
            "1 attempt(s) scored as people reviewed them"
        )
        assert page.text_content("[data-testid=mean-0]") != graded
        expect(page.locator("[data-testid=agreement]")).to_contain_text("disagree on 1")
        snap(page, "viewer-reviewed")
        page.goto(base + "compare/ckpt-100/ckpt-200")
        page.wait_for_selector("body[data-ready='1']", timeout=10_000)
        graded = page.text_content("[data-testid=diff-grader]")
        page.click("[data-testid=verdicts-toggle]")
        page.wait_for_selector("body[data-ready='1']", timeout=10_000)
        assert page.text_content("[data-testid=diff-grader]") != graded
        page.goto(base)  # the home: the run's tag beside its name
        expect(page.locator("tr[data-name=ckpt-100] .tag")).to_have_text("reward-hack?")
        page.fill("#filter", "reviewed")
        expect(page.locator("#body tr")).to_have_count(1)
        lines = (project / ".osmosis/evals/ckpt-100/reviews.jsonl").read_text().splitlines()
        assert len(lines) == 1 and '"row": 1' in lines[0]
        assert errors == []
    finally:
        context.close()
