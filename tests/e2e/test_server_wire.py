"""Server mode when the rollout server answers like a real one: whole large answers in
small pieces, chunked and gzipped, connections dying mid-answer, and hostile bodies
(the independent double serving through tests/realwire.py)."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path
from typing import Any

import pytest

from osmosis_client.platform.eval.eval_config import load_config
from osmosis_local_runner.run.execute.runner import Runner
from osmosis_local_runner.run.request.overrides import Overrides, config_spec
from osmosis_local_runner.run.request.spec import RunResult
from osmosis_local_runner.server import environment
from tests.server_workspace import server_workspace

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(not Path("/proc").is_dir(), reason="needs Linux /proc"),
]


@pytest.fixture(autouse=True)
def any_python(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(environment, "MIN_PYTHON", (3, 10))


def run(config: Path, out: Path) -> RunResult:
    spec = config_spec(
        load_config(config), Overrides(output=out, rollout_python=Path(sys.executable))
    )
    return asyncio.run(Runner(spec).run())


def runs(result: RunResult) -> dict[int, dict[str, Any]]:
    return {row["row_index"]: row["runs"][0] for row in result.document["rows"]}


def test_a_2mb_sample_in_small_chunked_gzipped_pieces_is_read_whole(tmp_path: Path) -> None:
    config = server_workspace(
        tmp_path / "ws",
        env={
            "FAKE_SAMPLE_PAD": str(2 << 20),
            "FAKE_WIRE": "piece=1448,delay=0.0005,chunked=1,encoding=gzip",
        },
        evaluation={"limit": 4, "batch_size": 4},
    )
    result = run(config, tmp_path / "out" / "results.json")
    summary = result.summary
    assert summary["errored_runs"] == 0, [r.get("error") for r in runs(result).values()]
    assert summary["eval_fns"]["grader"]["mean"] == 1.0


def test_a_result_over_64kb_in_plain_pieces_is_not_mistaken_for_a_timeout(tmp_path: Path) -> None:
    config = server_workspace(
        tmp_path / "ws",
        env={"FAKE_SAMPLE_PAD": str(200_000), "FAKE_WIRE": "piece=1448,delay=0.0005"},
        evaluation={
            "limit": 2,
            "batch_size": 2,
            "agent_workflow_timeout_s": 5,
            "grader_timeout_s": 5,
        },
    )
    result = run(config, tmp_path / "out" / "results.json")
    assert result.summary["errored_runs"] == 0
    assert result.summary["eval_fns"]["grader"]["mean"] == 1.0


def test_a_result_answer_dying_mid_body_is_polled_again(tmp_path: Path) -> None:
    config = server_workspace(
        tmp_path / "ws",
        env={"FAKE_WIRE": "piece=64,delay=0.0005,chunked=1", "FAKE_WIRE_KILL": "2"},
        evaluation={"limit": 3, "batch_size": 3},
    )
    result = run(config, tmp_path / "out" / "results.json")
    assert result.summary["errored_runs"] == 0
    assert result.summary["eval_fns"]["grader"]["mean"] == 1.0


def test_nested_json_from_a_rollout_server_fails_one_attempt_not_the_run(tmp_path: Path) -> None:
    config = server_workspace(
        tmp_path / "ws",
        env={"FAKE_NESTED_POST_ROWS": "1", "FAKE_NESTED_RESULT_ROWS": "2"},
        evaluation={"limit": 4, "batch_size": 4},
    )
    out = tmp_path / "out" / "results.json"
    result = run(config, out)
    by_row = runs(result)
    assert "POST /rollout answered with an unusable body" in by_row[1]["error"]
    assert "nested too deeply" in by_row[1]["error"]
    assert "GET /rollout/{id}/result answered with an unusable body" in by_row[2]["error"]
    assert by_row[0]["error"] is None and by_row[3]["error"] is None
    assert by_row[1]["err_category"] == "http_error"
    assert result.summary["errored_runs"] == 2 and out.is_file()
