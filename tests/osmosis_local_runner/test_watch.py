"""``watch_checkpoints`` (issue 52) against a loopback vLLM double with runtime LoRA
loading (``tests/vllm_lora_double.py``: answers depend on which adapter is named) and a
checkpoint folder written step by step, partial writes included: each complete
checkpoint is evaluated once with its own weights, in step order, recorded as one series;
a restarted watch skips what finished and continues a half-done step exactly once; a
step that fails is recorded and the watch goes on. The trainer acts between polls (the
injected ``sleep``): nothing sleeps."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from osmosis_local_runner import WatchEvent, load_run, watch_checkpoints
from osmosis_local_runner.run.session.journal import journal_path
from tests.vllm_lora_double import BASE, Vllm, running_vllm

CONFIG = "configs/eval/quickstart.toml"
RUNS = Path(".osmosis/evals")


@pytest.fixture
def vllm() -> Iterator[Vllm]:
    with running_vllm() as double:
        yield double


def _watch_once(ckpts: Path, url: str, *, limit: int, series: str = "grpo") -> Any:
    """One pass of a watch over ``ckpts`` (the LoRA base served at ``url``), no sleeping."""
    return watch_checkpoints(
        CONFIG,
        ckpts,
        series=series,
        model=BASE,
        base_url=url,
        limit=limit,
        once=True,
        sleep=Trainer(),
    )


def save(folder: Path, step: int, skill: str, *, complete: bool = True, **more: Any) -> Path:
    """A LoRA checkpoint as PEFT writes it: the weights, then its config (last)."""
    path = folder / f"step_{step}"
    path.mkdir(parents=True, exist_ok=True)
    (path / "adapter_model.safetensors").write_bytes(b"w" * (100 + step))
    if complete:
        (path / "adapter_config.json").write_text(json.dumps({"r": 8, "skill": skill, **more}))
    return path


class Trainer:
    """What the trainer does between the watch's polls, in order; the watch's ``sleep``."""

    def __init__(self, *acts: Callable[[], object]) -> None:
        self.acts = list(acts)
        self.polls = 0

    async def __call__(self, seconds: float) -> None:
        self.polls += 1
        if self.acts:
            self.acts.pop(0)()
        await asyncio.sleep(0)


def test_each_complete_checkpoint_is_evaluated_once_with_its_own_weights(
    vllm: Vllm, quickstart_project: Path, tmp_path: Path
) -> None:
    ckpts = tmp_path / "ckpts"
    save(ckpts, 100, "calculator")
    save(ckpts, 200, "echo", complete=False)  # being written: its weights so far
    events: list[WatchEvent] = []
    trainer = Trainer(
        lambda: save(ckpts, 200, "echo"),  # its config lands: sizes change, one more look
        lambda: None,  # unchanged across two looks: complete
        lambda: (save(ckpts, 300, "calculator"), (ckpts / "step_300" / "STABLE").touch()),
    )
    result = watch_checkpoints(
        CONFIG,
        ckpts,
        series="grpo",
        model=BASE,
        base_url=vllm.url,
        limit=4,
        until=300,
        poll=5,
        sleep=trainer,
        on_event=events.append,
    )
    assert result.finished == {100: "grpo-step-100", 200: "grpo-step-200", 300: "grpo-step-300"}
    assert [load["lora_name"] for load in vllm.loads] == [
        "grpo-step-100",
        "grpo-step-200",
        "grpo-step-300",
    ]
    assert vllm.unloads == ["grpo-step-100", "grpo-step-200", "grpo-step-300"]
    assert set(vllm.calls) == {"grpo-step-100", "grpo-step-200", "grpo-step-300"}
    assert len(vllm.calls) == 3 * 4 * 3  # steps × rows × n: each attempt once
    means = {step: load_run(name).summary.mean for step, name in result.finished.items()}
    assert means == {100: 1.0, 200: 0.0, 300: 1.0}  # the right weights answered
    document = json.loads((RUNS / "grpo-step-200" / "results.json").read_text())
    config = document["config"]
    assert (config["series"], config["step"], config["model"]) == ("grpo", 200, "grpo-step-200")
    weights = config["weights"]
    assert weights["root"] == str(ckpts / "step_200") and weights["parent"] == BASE
    assert weights["checkpoint_step"] == 200 and len(weights["adapter_config_sha256"]) == 64
    kinds = [e.kind for e in events]
    assert kinds.count("incomplete") >= 2 and kinds.count("finished") == 3
    assert "waiting" in kinds


def test_a_restarted_watch_skips_what_finished_and_continues_a_half_done_step(
    vllm: Vllm, quickstart_project: Path, tmp_path: Path
) -> None:
    ckpts = tmp_path / "ckpts"
    for step in (100, 200):
        save(ckpts, step, "calculator")
    first = _watch_once(ckpts, vllm.url, limit=4)
    assert set(first.finished) == {100, 200}
    # step 200 as a watch killed mid-step leaves it: two attempts journaled, no document
    run = RUNS / "grpo-step-200"
    (run / "results.json").unlink()
    journal = journal_path(run / "results.json")
    journal.write_text("".join(journal.read_text().splitlines(keepends=True)[:3]))
    calls = len(vllm.calls)
    again = _watch_once(ckpts, vllm.url, limit=4)
    assert again.finished == first.finished
    assert vllm.calls[calls:] == ["grpo-step-200"] * (12 - 2)  # only what was missing
    assert load_run("grpo-step-200").summary.total_runs == 12
    lines = journal.read_text().splitlines()[1:]
    keys = [(json.loads(x)["row_index"], json.loads(x)["run_index"]) for x in lines]
    assert len(keys) == len(set(keys)) == 12  # each attempt once


def test_a_failed_step_is_recorded_and_the_watch_goes_on(
    vllm: Vllm, quickstart_project: Path, tmp_path: Path
) -> None:
    ckpts = tmp_path / "ckpts"
    save(ckpts, 100, "calculator", broken=True)  # the server refuses to load it
    save(ckpts, 200, "calculator")
    result = _watch_once(ckpts, vllm.url, limit=2)
    assert set(result.failed) == {100} and "rank too large" in result.failed[100]
    assert result.finished == {200: "grpo-step-200"}
    record = json.loads(Path(".osmosis/watches/grpo.json").read_text())
    assert record["failed"] == {"100": result.failed[100]}


def test_a_server_without_runtime_lora_is_said_clearly(
    quickstart_project: Path, tmp_path: Path
) -> None:
    ckpts = tmp_path / "ckpts"
    save(ckpts, 1, "calculator")
    with running_vllm(runtime_lora=False) as plain:
        result = _watch_once(ckpts, plain.url, limit=1, series="s")
    assert "VLLM_ALLOW_RUNTIME_LORA_UPDATING" not in result.failed[1]  # the hint has it
    assert "load_lora_adapter is not served (404)" in result.failed[1]


def test_the_cli_says_what_the_watch_does_and_renders_what_it_did(
    vllm: Vllm, quickstart_project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from tests.osmosis_cli.conftest import Result

    ckpts = tmp_path / "ckpts"
    save(ckpts, 10, "calculator")
    (ckpts / "step_10" / "STABLE").touch()  # the trainer's marker: complete at first look
    save(ckpts, 20, "echo", broken=True)
    (ckpts / "step_20" / "STABLE").touch()
    from typer.testing import CliRunner

    from osmosis_cli.main import main

    def invoke(*args: str) -> Result:
        with CliRunner().isolation() as (out, err, _):
            try:
                main(list(args))
                code = 0
            except SystemExit as exc:
                code = exc.code if isinstance(exc.code, int) else 0
            return Result(code, out.getvalue().decode(), err.getvalue().decode())

    args = [
        "eval",
        "watch",
        CONFIG,
        "--checkpoints",
        str(ckpts),
        "--series",
        "grpo",
        "--model",
        BASE,
        "--base-url",
        vllm.url,
        "--limit",
        "2",
        "--once",
    ]
    done = invoke(*args)
    assert done.exit_code == 1  # a step failed: said, and the exit code says so
    assert "step 10: grpo-step-10 finished (mean 1.000)" in done.stderr
    assert "step 20: failed — the server refused to load" in done.stderr
    again = invoke("--json", *args)
    document = again.json()
    assert document["resource"]["finished"] == {"10": "grpo-step-10"}
    assert "20" in document["resource"]["failed"]
    refused = invoke(*args, "-o", "x.json")
    assert refused.exit_code == 2 and "-o does not go with eval watch" in refused.stderr


@pytest.mark.slow
def test_full_weights_are_served_by_the_users_command_and_stopped_after(
    quickstart_project: Path, tmp_path: Path
) -> None:
    """``serve_cmd``: a server process per checkpoint (the vLLM double as a script serving
    a folder's full weights), waited on until it answers, its process group stopped after;
    a command that dies is a failed step naming its output."""
    import socket
    import sys

    ckpts = tmp_path / "ckpts"
    for step, skill in ((1, "calculator"), (2, "echo")):
        (ckpts / f"checkpoint-{step}").mkdir(parents=True)
        (ckpts / f"checkpoint-{step}" / "config.json").write_text(json.dumps({"skill": skill}))
        (ckpts / f"checkpoint-{step}" / "STABLE").touch()
    (ckpts / "checkpoint-3").mkdir()
    (ckpts / "checkpoint-3" / "STABLE").touch()  # no config.json: the command dies
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    double = Path(__file__).resolve().parents[1] / "vllm_lora_double.py"
    command = f"{sys.executable} {double} --port {port} --weights {{path}} --name full"
    result = watch_checkpoints(
        CONFIG,
        ckpts,
        series="full",
        serve_cmd=command,
        model="full",
        base_url=f"http://127.0.0.1:{port}/v1",
        limit=3,
        once=True,
        serve_timeout=60,
    )
    assert result.finished == {1: "full-step-1", 2: "full-step-2"}
    assert (
        load_run("full-step-1").summary.mean == 1.0 and load_run("full-step-2").summary.mean == 0.0
    )
    assert "serve command exited" in result.failed[3] and "config.json" in result.failed[3]
    with socket.socket() as sock:  # every server stopped: the port is free again
        sock.bind(("127.0.0.1", port))


def test_a_trainer_callback_evaluates_saves_in_the_background_newest_first(
    vllm: Vllm, quickstart_project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``OsmosisEvalCallback`` under transformers' own classes: ``on_save`` returns at
    once while one evaluation runs; saves that pile up meanwhile leave only the newest;
    ``on_train_end`` waits for it. Then the real thing against the vLLM double."""
    import threading
    from types import SimpleNamespace

    from transformers import TrainerControl, TrainerState

    from osmosis_local_runner.api import trainer as module

    release, started, evaluated = threading.Event(), threading.Event(), []

    async def slow(config: Any, path: Path, step: int, **options: Any) -> Any:
        evaluated.append(step)
        started.set()
        await asyncio.to_thread(release.wait, 30)
        return module.WatchResult("s", finished={step: f"s-step-{step}"})

    original = module.aevaluate_checkpoint
    monkeypatch.setattr(module, "aevaluate_checkpoint", slow)
    callback = module.OsmosisEvalCallback(CONFIG, series="s")
    args, control = SimpleNamespace(output_dir=str(tmp_path / "out")), TrainerControl()
    assert callback.on_save(args, TrainerState(global_step=10), control) is control
    assert started.wait(30)  # step 10 is being evaluated: the training goes on meanwhile
    for step in (20, 30, 40):
        callback.on_save(args, TrainerState(global_step=step), control)
    assert not callback.wait(timeout=0.05)  # still at work
    release.set()
    callback.on_train_end(args, TrainerState(global_step=40), control)
    assert evaluated == [10, 40]  # 20 and 30 were outdated before their turn

    monkeypatch.setattr(module, "aevaluate_checkpoint", original)
    out = tmp_path / "trainer-out"
    save(out, 5, "calculator").rename(out / "checkpoint-5")
    real = module.OsmosisEvalCallback(CONFIG, series="trl", model=BASE, base_url=vllm.url, limit=2)
    real.on_save(SimpleNamespace(output_dir=str(out)), TrainerState(global_step=5), control)
    real.on_train_end(SimpleNamespace(output_dir=str(out)), TrainerState(global_step=5), control)
    assert real.results[0].finished == {5: "trl-step-5"}
    assert load_run("trl-step-5").summary.mean == 1.0
