"""``osmosis eval view --bundle DIR`` (issue 47): the viewer as a static site, opened
from ``file://`` in a real Chromium with no server running — the home's links, a run's
page with its rows and a deep link, a comparison, a sweep, a suite; no console error, no
request leaving the folder."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.test_report_browser import browser, expect, invoke, project
from tests.helpers import SUITE_RUN

pytestmark = pytest.mark.slow
__all__ = ["browser", "project"]  # fixtures defined beside the report's tests
RUN = ["eval", "run", "configs/eval/quickstart.toml", "-q", "--limit", "3"]


def test_a_bundle_opens_from_file_with_no_server(browser: Any, project: Path) -> None:
    for name, model in (
        ("step-100", "mock/calculator"),
        ("step-200", "mock/echo"),
        ("step-300", "mock/calculator"),
    ):
        series = ["--series", "grpo", "--step", name.split("-")[1]]  # recorded, not read
        assert invoke(*RUN, "--model", model, "--name", name, *series).exit_code == 0
    suite = SUITE_RUN
    assert invoke(*suite).exit_code == 0
    written = invoke("--json", "eval", "view", "--bundle", "site")
    assert written.exit_code == 0, written.stderr
    resource = written.json()["resource"]
    assert resource["runs"] == ["step-300", "step-200", "step-100"]  # newest first
    assert resource["comparisons"] == ["step-100--step-200", "step-200--step-300"]
    assert resource["sweeps"] == ["grpo"] and resource["suites"] == ["sweep"]

    errors: list[str] = []
    requests: list[str] = []
    context = browser.new_context()
    page = context.new_page()
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.on("request", lambda r: requests.append(r.url))
    try:
        index = (project / "site" / "index.html").as_uri()
        page.goto(index)
        expect(page.locator("[data-testid=runs] tbody tr")).to_have_count(3)
        snap = os.environ.get("OSMOSIS_SCREENSHOTS")
        if snap:
            page.screenshot(path=str(Path(snap) / "bundle-home.png"))
        page.click("text=step-200")
        page.wait_for_selector("body[data-ready='1']", timeout=10_000)
        assert page.locator("tr.row").count() == 3
        page.goto(page.url + "#row=1")  # a deep link to a row works from file:// too
        expect(page.locator(".transcript")).to_have_count(1)
        page.click("[data-testid=crumbs] a")  # back to the site's home
        page.wait_for_selector("[data-testid=runs]")
        page.click("text=step-100 vs step-200")
        page.wait_for_selector("body[data-ready='1']", timeout=10_000)
        assert page.text_content("section.comparison h2") == "step-100 vs step-200"
        page.go_back()
        page.click("a[href='sweeps/grpo.html']")  # the series' sweep
        expect(page.locator("[data-testid=against] tbody tr")).to_have_count(2)
        page.click("[data-testid=against] a >> nth=0")  # a step links to its run's page
        page.wait_for_selector("body[data-ready='1']", timeout=10_000)
        assert page.url.endswith("runs/step-200.html")
        page.go_back()
        page.go_back()
        page.click("a[href='suites/sweep.html']")
        page.wait_for_selector("body[data-ready='1']", timeout=10_000)
        assert "quickstart-suite" in page.content()
        assert errors == []
        site = (project / "site").as_uri()
        assert all(url.startswith(site) for url in requests), requests  # nothing else asked
    finally:
        context.close()


def test_a_bundle_of_named_runs_and_bad_input(project: Path) -> None:
    assert invoke(*RUN, "--model", "mock/calculator", "--name", "a").exit_code == 0
    assert invoke(*RUN, "--model", "mock/calculator", "--name", "b").exit_code == 0
    one = invoke("--json", "eval", "view", "--bundle", "one", "a")
    assert one.json()["resource"]["runs"] == ["a"]
    assert not (project / "one" / "runs" / "b.html").exists()
    missing = invoke("eval", "view", "--bundle", "x", "nope")
    assert missing.exit_code == 2 and "no local run named 'nope'" in missing.stderr
    (project / "file.txt").write_text("")
    onto_file = invoke("eval", "view", "--bundle", "file.txt")
    assert onto_file.exit_code == 2 and "is a file" in onto_file.stderr
    unwritable = invoke("eval", "view", "--bundle", "file.txt/site")
    assert unwritable.exit_code == 2, unwritable.stderr
    assert (
        "cannot write file.txt/site/" in unwritable.stderr and "(--bundle DIR)" in unwritable.stderr
    )
    report = invoke("eval", "report", "a", "-o", "file.txt/r.html")
    assert report.exit_code == 2 and "cannot write file.txt/r.html" in report.stderr
    named_live = invoke("eval", "view", "a")
    assert named_live.exit_code == 2 and "go with --bundle DIR" in named_live.stderr
    bad_space = invoke("eval", "view", "--bundle", "y", "--to", "hf-space:nope")
    assert bad_space.exit_code == 2 and "names no Hub dataset repository" in bad_space.stderr
    assert not (project / "y").exists()  # said before anything was written


def test_a_bundle_published_as_a_static_space(project: Path, monkeypatch: Any) -> None:
    from tests.hub_double import TOKEN, running_hub

    assert invoke(*RUN, "--model", "mock/calculator", "--name", "a").exit_code == 0
    with running_hub() as hub:
        monkeypatch.setenv("HF_ENDPOINT", hub.url)
        monkeypatch.setenv("HF_TOKEN", TOKEN)
        monkeypatch.setenv("HF_HOME", str(project / ".hf"))
        done = invoke("--json", "eval", "view", "--bundle", "site", "--to", "hf-space:acme/evals")
        assert done.exit_code == 0, done.stderr
        assert done.json()["resource"]["url"] == f"{hub.url}/spaces/acme/evals"
        space = hub.repos["acme/evals"]
        assert (space.kind, space.sdk, space.private) == ("space", "static", True)
        assert {"index.html", "runs/a.html", "README.md"} <= set(space.files)
        assert b"app_file: index.html" in space.files["README.md"]
