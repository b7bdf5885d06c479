"""The call record is the wire (issue 54, part 1): each model call keeps each try's
request body exactly as the peer received it and the response exactly as it came back,
with status, the headers that matter and its time — never a request header (the key)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from osmosis_local_runner import run_eval
from tests.stub_openai import StubOpenAI

CONFIG = "configs/eval/quickstart.toml"
KEY = "sk-wire-test-never-kept-31337"


def calls(results: Path) -> list[dict[str, Any]]:
    document = json.loads(results.read_text())
    return [
        call
        for row in document["rows"]
        for run in row["runs"]
        for call in run.get("model_calls") or []
    ]


def test_the_recorded_request_is_byte_for_byte_what_the_peer_received(
    quickstart_project: Path,
) -> None:
    out = quickstart_project / "w.json"
    with StubOpenAI() as stub:
        stub.fail_next(503)  # the first call's first try fails: two tries on the wire
        run_eval(
            CONFIG,
            output=out,
            model="stub",
            base_url=stub.url,
            api_key=KEY,
            limit=3,
            n=1,
            temperature=0.5,
            batch_size=1,
        )
        received = list(stub.state.bodies)
    found = calls(out)
    tries = [t for call in found for t in call["wire"]]
    assert [t["status"] for t in found[0]["wire"]] == [503, 200]
    sent = [t["sent"].encode() for t in tries]
    assert sent == received or sorted(sent) == sorted(received)  # one try, one request
    for t in tries:
        assert t["url"] == f"{stub.url}/chat/completions" and t["sent_bytes"] == len(t["sent"])
        assert json.loads(t["sent"])["model"] == "stub"  # what was sent, as sent
    answered = [t for t in tries if t["status"] == 200]
    assert all(json.loads(t["received"])["object"] == "chat.completion" for t in answered)
    assert answered[0]["headers"]["x-request-id"].startswith("req-")
    text = out.read_text()
    assert KEY not in text and "never-kept" not in text  # no request header, no stray one
    assert "authorization" not in text.lower()


def test_the_page_shows_what_was_sent_and_what_came_back(quickstart_project: Path) -> None:
    from osmosis_local_runner.results.documents.documents import ResultsFile
    from osmosis_local_runner.results.reports.report_transcripts import calls_of

    out = quickstart_project / "p.json"
    with StubOpenAI() as stub:
        run_eval(CONFIG, output=out, model="stub", base_url=stub.url, limit=1, n=1)
    (row,) = ResultsFile(out).rows()
    shown = calls_of(row.runs[0])
    assert shown is not None and shown[0]["wire"][0]["sent"] == calls(out)[0]["wire"][0]["sent"]
    assert shown[0]["wire"][0]["headers"]["x-request-id"] == "req-1"


def test_a_broken_request_stops_the_run_after_its_first_refusals(
    quickstart_project: Path,
) -> None:
    import pytest

    from osmosis_client.errors import OsmosisError

    out = quickstart_project / "b.json"
    with StubOpenAI() as stub:
        stub.fail_next(400, count=1000)  # a model refusing a parameter, every time
        with pytest.raises(OsmosisError) as stopped:
            run_eval(CONFIG, output=out, model="stub", base_url=stub.url, limit=20, n=3)
        calls_made = len(stub.state.requests)
        assert stopped.value.code == "BROKEN_REQUEST"
        assert "the first 5 model calls were all refused" in stopped.value.message
        assert "HTTP 400 (injected 400)" in stopped.value.message
        assert calls_made < 20  # not 60 attempts spent on it
        document = json.loads(out.read_text())
        assert document["summary"]["stopped_reason"] == "broken_request"
        stub.state.failures.clear()  # fixed: the run resumes where it stopped
        stub.fail_next(400, count=3)
        done = run_eval(
            CONFIG, output=out, model="stub", base_url=stub.url, resume=True, max_same_errors=0
        )
    assert done.status == "finished"
