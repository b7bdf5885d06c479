"""``client.training_runs`` and ``osmosis train list / logs / stop`` (issue 37): every
route on respx, sync and async; the published list item, plain row and stop operation;
``stop`` of a missing run is ``NOT_FOUND`` before anything is sent."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
import respx

from osmosis_client import AsyncClient, Client
from osmosis_client.errors import ConflictError, NotFoundError
from tests.conftest import PLATFORM
from tests.osmosis_cli.conftest import Invoke

RUN = {
    "id": "tr_a4d2c",
    "name": "qwen-multiply-002",
    "status": "running",
    "model": {"id": "bm_1", "model_name": "Qwen/Qwen3.6-35B-A3B"},
    "dataset": {"id": "ds_1", "file_name": "multiply"},
    "rollout": {"id": "ro_1", "name": "multiply-local-openai"},
    "created_at": "2026-11-27T04:05:00Z",
    "creator_name": "Dev Example",
    "current_step": 55,
    "total_steps": 40,
    "reward": 0.41,
}
DETAIL = {
    "training_run": {**RUN, "examples_processed_count": 1280},
    "model": {"id": "bm_1", "name": "Qwen/Qwen3.6-35B-A3B"},
    "config": {"lr": 1e-5},
    "entrypoint": "main.py",
    "branch": "main",
}
METRICS = {
    "status": "running",
    "overview": {
        "duration_ms": 7_140_000,
        "latest_step": 39,
        "total_steps": 40,
        "metric_summaries": [
            {
                "key": "rollout/raw_reward",
                "title": "Reward",
                "initial": 0.1,
                "latest": 0.41,
                "delta": 0.31,
            }
        ],
    },
    "metrics": [
        {
            "metric_key": "rollout/raw_reward",
            "title": "Reward",
            "data_points": [{"step": 1, "value": 0.1, "timestamp": 1764065269655}],
        }
    ],
}
LOGS = {
    "logs": [
        {
            "timestamp": "2026-11-25T10:45:49Z",
            "level": "info",
            "step": "train",
            "message": "step 39/40 done",
        }
    ],
    "next_cursor": "c2",
}


def page(items: list[dict[str, Any]], more: bool = False) -> dict[str, Any]:
    return {
        "training_runs": items,
        "total_count": len(items) + (1 if more else 0),
        "has_more": more,
        "next_offset": len(items) if more else None,
    }


@pytest.fixture
def platform(monkeypatch: pytest.MonkeyPatch) -> respx.MockRouter:
    monkeypatch.setenv("OSMOSIS_TOKEN", "t")
    monkeypatch.setenv("OSMOSIS_WORKSPACE", "acme")
    with respx.mock(base_url=PLATFORM, assert_all_called=False) as router:
        router.get("/api/cli/training-runs", params={"offset": "0"}).respond(
            200, json=page([RUN], more=True)
        )
        router.get("/api/cli/training-runs", params={"offset": "1"}).respond(
            200, json=page([{**RUN, "id": "tr_2", "name": "older", "reward": None}])
        )
        router.get("/api/cli/training-runs/qwen-multiply-002").respond(200, json=DETAIL)
        router.get("/api/cli/training-runs/tr_a4d2c").respond(200, json=DETAIL)
        router.get("/api/cli/training-runs/qwen-multiply-002/checkpoints").respond(
            200,
            json={
                "checkpoints": [
                    {
                        "id": "ck_1",
                        "checkpoint_step": 20,
                        "checkpoint_name": "qwen-multiply-002-step-20",
                        "status": "uploaded",
                    }
                ]
            },
        )
        router.get("/api/cli/training-runs/tr_a4d2c/metrics").respond(200, json=METRICS)
        router.get("/api/cli/training-runs/qwen-multiply-002/logs").respond(200, json=LOGS)
        router.get("/api/cli/training-runs/ghost").respond(404, json={"error": "not found"})
        yield router


@pytest.mark.parametrize("face", ["sync", "async"])
def test_every_training_route(platform: respx.MockRouter, face: str) -> None:
    def calls(c: Any) -> list[Any]:
        return [
            list(c.training_runs.pages(1)),
            c.training_runs.get("qwen-multiply-002"),
            c.training_runs.checkpoints("qwen-multiply-002"),
            c.training_runs.metrics("tr_a4d2c"),
            c.training_runs.logs("qwen-multiply-002"),
        ]

    async def acalls(c: Any) -> list[Any]:
        pages = [p async for p in c.training_runs.pages(1)]
        return [
            pages,
            await c.training_runs.get("qwen-multiply-002"),
            await c.training_runs.checkpoints("qwen-multiply-002"),
            await c.training_runs.metrics("tr_a4d2c"),
            await c.training_runs.logs("qwen-multiply-002"),
        ]

    options = {"base_url": PLATFORM, "token": "t", "workspace": "acme", "max_retries": 0}
    if face == "sync":
        with Client(**options) as client:
            pages, detail, checkpoints, metrics, logs = calls(client)
    else:

        async def go() -> list[Any]:
            async with AsyncClient(**options) as client:
                return await acalls(client)

        pages, detail, checkpoints, metrics, logs = asyncio.run(go())
    assert [r.name for p in pages for r in p.training_runs] == ["qwen-multiply-002", "older"]
    assert detail.training_run.examples_processed_count == 1280 and detail.config == {"lr": 1e-5}
    assert checkpoints.checkpoints[0].checkpoint_step == 20
    assert metrics.overview.metric_summaries[0].latest == 0.41
    assert logs.next_cursor == "c2" and logs.logs[0].message == "step 39/40 done"
    limits = {
        r.request.url.params["limit"]
        for r in platform.calls
        if r.request.url.path == "/api/cli/training-runs"
    }
    assert limits == {"1"}


def test_stop_looks_the_run_up_first_and_says_its_state(platform: respx.MockRouter) -> None:
    stop = platform.post("/api/cli/training-runs/tr_a4d2c/stop").respond(200, json={})
    ghost = platform.post("/api/cli/training-runs/ghost/stop").respond(200, json={})
    with Client(base_url=PLATFORM, token="t", workspace="acme", max_retries=0) as client:
        after = client.training_runs.stop("qwen-multiply-002")  # stopped by its id
        with pytest.raises(NotFoundError):
            client.training_runs.stop("ghost")
        ended = {**DETAIL, "training_run": {**RUN, "id": "tr_done"}}
        platform.get("/api/cli/training-runs/done").respond(200, json=ended)
        platform.post("/api/cli/training-runs/tr_done/stop").respond(409, json={"error": "ended"})
        with pytest.raises(ConflictError):
            client.training_runs.stop("done")
    assert after.training_run.status == "running" and stop.called
    assert json.loads(stop.calls.last.request.content) == {}
    assert not ghost.called  # a run that does not exist: nothing sent


def test_train_list_json_item_and_plain_row(invoke: Invoke, platform: respx.MockRouter) -> None:
    items = invoke("--json", "train", "list", "--limit", "1").items()
    first = items[0]
    assert first["model_name"] == "Qwen/Qwen3.6-35B-A3B" and first["dataset_name"] == "multiply"
    assert first["summary"] == {
        "reward": 0.41,
        "progress": {"completed": 40, "total": 40, "unit": "steps"},
    }
    every = invoke("--json", "train", "list", "--all")
    assert [i["name"] for i in every.items()] == ["qwen-multiply-002", "older"]
    assert "reward" not in every.items()[1]  # null optional keys are left out
    plain = invoke("--plain", "train", "list", "--limit", "1")
    assert plain.stdout.splitlines()[0] == (
        "qwen-multiply-002\t[running]\tQwen/Qwen3.6-35B-A3B\tmultiply-local-openai\t0.41\t"
        "2026-11-27 4:05 AM UTC\tDev Example"
    )
    both = invoke("train", "list", "--all", "--limit", "2")
    assert both.exit_code == 2 and "mutually exclusive" in both.stderr


def test_train_logs_and_stop(invoke: Invoke, platform: respx.MockRouter) -> None:
    logs = invoke("--json", "train", "logs", "qwen-multiply-002", "--limit", "1")
    document = json.loads(logs.stdout)
    assert document["items"][0]["message"] == "step 39/40 done"
    assert document["next_cursor"] == "c2"
    stop = platform.post("/api/cli/training-runs/tr_a4d2c/stop").respond(200, json={})
    asked = invoke("train", "stop", "qwen-multiply-002")  # no terminal, no --yes
    assert asked.exit_code == 2 and not stop.called
    done = invoke("--json", "train", "stop", "qwen-multiply-002", "-y")
    assert done.exit_code == 0, done.stderr
    assert done.resource()["name"] == "qwen-multiply-002"
    missing = invoke("train", "stop", "ghost", "--yes")
    assert missing.exit_code != 0 and "not found" in missing.stderr.lower()


# ------------------------------------------------------------------ train info


def test_info_json_has_checkpoints_and_the_metrics_export(
    invoke: Invoke, platform: respx.MockRouter, tmp_path: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    data = invoke("--json", "train", "info", "qwen-multiply-002").data()
    assert data["training_run"]["examples_processed_count"] == 1280
    assert data["checkpoints"][0]["checkpoint_name"] == "qwen-multiply-002-step-20"
    assert data["in_progress"] is True and data["metrics_available"] is True
    export = data["metrics"]
    assert export["summary"] == {"training_reward": {"initial": 0.1, "latest": 0.41, "delta": 0.31}}
    assert export["metrics"][0]["data"][0]["timestamp"] == "2025-11-25T10:07:49.655000+00:00"
    assert data["output_path"] is None and not (tmp_path / ".osmosis").exists()  # --json: no file


def test_info_saves_metrics_with_o_expanding_home_and_never_clobbers(
    invoke: Invoke, platform: respx.MockRouter, tmp_path: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    first = invoke("--json", "train", "info", "qwen-multiply-002", "-o", "~/out/m.csv")
    assert first.exit_code == 0, first.stderr
    saved = tmp_path / "home" / "out" / "m.json"
    assert first.data()["output_path"] == str(saved)
    assert json.loads(saved.read_text())["training_run"]["rows_processed"] == 1280
    again = invoke("train", "info", "qwen-multiply-002", "-o", "~/out/m.json")
    assert (
        again.exit_code == 2 and "already exists" in again.stderr and "--overwrite" in again.stderr
    )
    replaced = invoke(
        "--json", "train", "info", "qwen-multiply-002", "-o", "~/out/m.json", "--overwrite"
    )
    assert replaced.exit_code == 0
    into_dir = invoke("--json", "train", "info", "qwen-multiply-002", "-o", "outdir/")
    assert into_dir.data()["output_path"].endswith("outdir/qwen-multiply-002_tr_a4d2c.json")


def test_info_for_people_refreshes_the_default_file_and_prints_lines(
    invoke: Invoke, platform: respx.MockRouter, tmp_path: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    for _ in range(2):  # the default file is refreshed in place
        result = invoke("train", "info", "qwen-multiply-002")
        assert result.exit_code == 0, result.stderr
    assert (tmp_path / ".osmosis" / "metrics" / "qwen-multiply-002_tr_a4d2c.json").is_file()
    plain = invoke("--plain", "train", "info", "qwen-multiply-002").stdout.splitlines()
    assert "Status: Running" in plain and "Progress: 40 / 40 steps" in plain
    assert "Config: lr=1e-05" in plain and "Duration: 1h 59m" in plain
    assert "Checkpoint: qwen-multiply-002-step-20 step 20 [uploaded]" in plain


def test_info_of_a_pending_run_asks_nothing_more(
    invoke: Invoke, platform: respx.MockRouter
) -> None:
    pending = {**DETAIL, "training_run": {**DETAIL["training_run"], "status": "queued"}}
    platform.get("/api/cli/training-runs/waiting").respond(200, json=pending)
    checkpoints = platform.get("/api/cli/training-runs/waiting/checkpoints").respond(200, json={})
    data = invoke("--json", "train", "info", "waiting").data()
    assert data["metrics_error"].startswith("Metrics are not yet available")
    assert not checkpoints.called and data["in_progress"] is False


def test_metrics_that_cannot_be_read_are_said_and_checkpoints_errors_ignored(
    invoke: Invoke, platform: respx.MockRouter
) -> None:
    platform.get("/api/cli/training-runs/qwen-multiply-002/checkpoints").respond(500)
    platform.get("/api/cli/training-runs/tr_a4d2c/metrics").respond(
        500, json={"error": "metrics store unavailable"}
    )
    result = invoke("--json", "train", "info", "qwen-multiply-002")
    assert result.exit_code == 0, result.stderr
    data = result.data()
    assert data["checkpoints"] == [] and "metrics store unavailable" in data["metrics_error"]


def test_info_shows_each_metric_first_to_last_and_names_the_checkpoint_to_deploy(
    invoke: Invoke, platform: respx.MockRouter, tmp_path: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    lines = invoke("--plain", "train", "info", "qwen-multiply-002").stdout.splitlines()
    assert "  Reward: 0.1 -> 0.41 (+0.31)" in lines  # a log gets numbers, no block characters
    assert (
        "Deploy the newest checkpoint with: osmosis model deploy qwen-multiply-002-step-20" in lines
    )
    assert not any("<" in line for line in lines)  # no placeholder left for the user to fill


def test_on_a_terminal_a_metric_has_its_sparkline_and_series_without_summary_count() -> None:
    from osmosis_cli.commands.train.info import _lines
    from osmosis_cli.terminal.spark import sparkline
    from osmosis_client.platform.training.training_models import TrainingMetrics, TrainingRunDetail

    points = [{"step": s, "value": v, "timestamp": 0} for s, v in ((3, 0.9), (1, 0.1), (2, 0.5))]
    metrics = TrainingMetrics.model_validate(
        {
            **METRICS,
            "metrics": [
                *METRICS["metrics"],
                {"metric_key": "train/entropy_loss", "title": "Entropy", "data_points": points},
            ],
        }
    )
    detail = TrainingRunDetail.model_validate(DETAIL)
    lines = _lines(detail, [], metrics, None, None, terminal=True)
    assert "  Entropy: 0.1 → 0.9 (+0.8)  ▁▅█" in lines  # in step order, not wire order
    assert "  Reward: 0.1 → 0.41 (+0.31)" in lines  # one point: no line to draw
    assert sparkline([1.0] * 3) == "▄▄▄" and sparkline([]) == ""
    assert len(sparkline([float(i) for i in range(100)])) == 24
    assert sparkline([float(i) for i in range(100)])[0] == "▁"


@pytest.mark.parametrize("planted", [".osmosis", ".osmosis/metrics"])
def test_info_never_writes_its_default_file_through_a_planted_link(
    invoke: Invoke,
    platform: respx.MockRouter,
    tmp_path: Any,
    monkeypatch: pytest.MonkeyPatch,
    planted: str,
) -> None:
    work, elsewhere = tmp_path / "work", tmp_path / "elsewhere"
    work.mkdir()
    elsewhere.mkdir()
    (work / planted).parent.mkdir(parents=True, exist_ok=True)
    (work / planted).symlink_to(elsewhere)
    monkeypatch.chdir(work)
    result = invoke("train", "info", "qwen-multiply-002")
    assert result.exit_code == 2 and "symbolic link" in result.stderr
    assert list(elsewhere.rglob("*")) == []


def test_info_o_to_a_place_that_cannot_be_written_is_invalid_input(
    invoke: Invoke, platform: respx.MockRouter, tmp_path: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    import os

    monkeypatch.chdir(tmp_path)
    (tmp_path / "a-file").write_text("x")
    places = ["a-file/m.json", "x" * 300 + ".json"]
    if os.geteuid() != 0:  # root writes into read-only folders
        (tmp_path / "ro").mkdir(mode=0o500)
        places.append("ro/m.json")
    for place in places:
        result = invoke("train", "info", "qwen-multiply-002", "-o", place)
        assert result.exit_code == 2, (place, result.stderr)
        assert result.stderr.startswith("error: cannot save the metrics to"), result.stderr
        assert "Traceback" not in result.stderr


def test_a_run_not_found_says_the_name_meant_and_the_command_that_lists_them(
    invoke: Invoke, platform: respx.MockRouter
) -> None:
    platform.get("/api/cli/training-runs/qwen-multiply-02").respond(404, json={"error": "nope"})
    result = invoke("train", "info", "qwen-multiply-02")
    assert result.exit_code == 1
    assert "did you mean 'qwen-multiply-002'? see what exists with `osmosis train list`" in (
        result.stderr
    )
    ghost = invoke("train", "info", "ghost")  # nothing near: the list command alone
    assert ghost.stderr.rstrip().endswith("see what exists with `osmosis train list`")


def test_on_a_terminal_a_series_spanning_the_floats_is_drawn() -> None:
    """Issue 51: a metric from ±1e308 made the sparkline's scale overflow (a crash)."""
    from osmosis_cli.commands.train.info import _lines
    from osmosis_client.platform.training.training_models import TrainingMetrics, TrainingRunDetail

    points = [
        {"step": s, "value": v, "timestamp": 0} for s, v in ((1, -1e308), (2, 0.0), (3, 1e308))
    ]
    metrics = TrainingMetrics.model_validate(
        {
            **METRICS,
            "metrics": [{"metric_key": "train/loss", "title": "Loss", "data_points": points}],
        }
    )
    lines = _lines(TrainingRunDetail.model_validate(DETAIL), [], metrics, None, None, terminal=True)
    assert any(line.startswith("  Loss: ") and line.endswith("▁▅█") for line in lines), lines
