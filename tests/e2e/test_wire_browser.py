"""The call record is the wire, in Chromium (issue 54): a model call's tab shows each try as
what was sent and what came back — a retried call's 503 and then its 200 — and a call
answered from the cache says so; the run's card counts the cached calls."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.test_report_browser import Page, browser, invoke, project

__all__ = ["browser", "project"]  # fixtures, used by name

pytestmark = pytest.mark.slow

RUN = """
import sys
from osmosis_local_runner import run_eval
from tests.stub_openai import StubOpenAI

with StubOpenAI() as stub:
    stub.state.models = [{"id": "stub", "root": "/ckpt/step-100"}]
    stub.fail_next(503)
    for name in ("first", "again"):
        run_eval("configs/eval/quickstart.toml", output=name + ".json", model="stub",
                 base_url=stub.url, limit=1, n=1, cache=True, batch_size=1)
"""


def test_the_model_calls_tab_shows_each_try_as_sent_and_received(
    browser: Any, project: Path, tmp_path: Path
) -> None:
    env = {**os.environ, "OSMOSIS_CACHE_DIR": str(tmp_path / "cache")}
    env["PYTHONPATH"] = str(Path(__file__).resolve().parents[2])
    subprocess.run([sys.executable, "-c", RUN], check=True, env=env, timeout=120)
    made = invoke("eval", "report", "first.json", "again.json", "-o", "out/wire.html")
    assert made.exit_code == 0, made.stderr
    page = Page(browser, project / "out" / "wire.html")
    try:
        assert page.errors == []
        assert "1 of 1 calls" in page.text("body")  # the second run's card: from the cache
        page.page.locator("tr.row").first.click()
        transcript = page.page.locator(".transcript")
        transcript.wait_for()
        transcript.locator(".tab[data-tab='model calls']").first.click()
        first, again = transcript.locator("details.calls").all()[:2]
        first.locator("summary").first.click()
        tries = first.locator("details.wire")
        heads = [str(t.locator("summary").text_content()) for t in tries.all()]
        assert len(heads) == 2 and heads[0].endswith("→ 503") and heads[1].endswith("→ 200")
        assert "what was sent / what came back · POST http://127.0.0.1" in heads[1]
        tries.nth(1).locator("summary").click()
        shown = str(tries.nth(1).text_content())
        assert "sent (" in shown and '"model": "stub"' in shown and "x-request-id" in shown
        again.locator("summary").first.click()
        assert "from cache" in str(again.locator(".call-head").first.text_content())
        shot = page.page.screenshot(full_page=False)
        assert len(shot) > 20_000
        if keep := os.environ.get("OSMOSIS_SCREENSHOTS"):
            Path(keep).mkdir(parents=True, exist_ok=True)
            (Path(keep) / "report-wire.png").write_bytes(shot)
    finally:
        page.close()
