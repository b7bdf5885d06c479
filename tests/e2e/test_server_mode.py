"""Server mode against the independent rollout server double (a real subprocess on
loopback): the controller, the bridge, the lifecycle and the results."""

from __future__ import annotations

import asyncio
import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from osmosis_client._process import start_time as _start_time
from osmosis_client.errors import ConfigError, InvalidInputError
from osmosis_client.platform.eval.eval_config import load_config
from osmosis_local_runner.run.execute.runner import Runner
from osmosis_local_runner.run.kinds.server import ServerRollout
from osmosis_local_runner.run.request.overrides import Overrides, config_spec
from osmosis_local_runner.run.request.spec import RunResult, RunSpec
from osmosis_local_runner.server import environment
from osmosis_local_runner.server.orphans import INSTANCE_VAR, reap_orphans
from osmosis_local_runner.server.process import ServerStartError
from tests.server_workspace import default_rows, server_pids, server_workspace

pytestmark = pytest.mark.skipif(not Path("/proc").is_dir(), reason="needs Linux /proc")


@pytest.fixture(autouse=True)
def any_python(monkeypatch: pytest.MonkeyPatch) -> None:
    """The double runs on the test interpreter, whatever its version."""
    monkeypatch.setattr(environment, "MIN_PYTHON", (3, 10))


def make_spec(config: Path, out: Path, **flags: Any) -> RunSpec:
    overrides = Overrides(output=out, rollout_python=Path(sys.executable), **flags)
    return config_spec(load_config(config), overrides)


def kind_of(spec: RunSpec) -> ServerRollout:
    assert isinstance(spec.rollout, ServerRollout)
    return spec.rollout


def run(spec: RunSpec, **kwargs: Any) -> RunResult:
    return asyncio.run(Runner(spec, **kwargs).run())


def runs(result: RunResult) -> dict[int, dict[str, Any]]:
    return {row["row_index"]: row["runs"][0] for row in result.document["rows"]}


def requests_logged(log: Path, route: str) -> list[dict[str, Any]]:
    entries = [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []
    return [e for e in entries if e["route"] == route]


def test_runs_the_rollout_server_and_records_what_it_did(tmp_path: Path) -> None:
    log = tmp_path / "requests.jsonl"
    config = server_workspace(
        tmp_path / "ws",
        env={"FAKE_STREAM": "1", "FAKE_MAX_CONCURRENT": "3", "FAKE_LOG": str(log)},
        evaluation={"batch_size": 8},
    )
    out = tmp_path / "out" / "results.json"
    notes: list[str] = []
    spec = make_spec(config, out)
    result = run(spec, on_note=notes.append)

    summary = result.summary
    assert summary["eval_fns"]["grader"]["mean"] == 1.0
    assert summary["errored_runs"] == 0 and summary["skipped_runs"] == 0
    assert result.config["rollout_mode"] == "server"
    # the window never exceeds the server's capacity (it would queue and burn timeouts)
    assert result.stats.max_in_flight == 3
    assert any("3 rollouts at once" in n for n in notes)
    by_row = runs(result)
    assert summary["total_tokens"] == sum(r["tokens"] for r in by_row.values()) > 0
    first = by_row[0]
    assert first["err_category"] is None and first["answer"] == "56"
    assert first["messages"] == [
        {"role": "system", "content": "Answer with the number only."},
        {"role": "user", "content": "What is 17 + 39?"},
        {"role": "assistant", "content": "56"},
    ]
    trajectory = out.parent / first["trajectory"]
    assert trajectory.is_file() and trajectory.is_relative_to(out.parent / "results.run")
    assert json.loads(trajectory.read_text())["session_id"] == first["rollout_id"]
    # every request carried all ten keys, this rollout's bridge URL and the run's token
    posted = [e["body"] for e in requests_logged(log, "rollout")]
    assert len(posted) == 8
    body = next(b for b in posted if b["rollout_id"] == first["rollout_id"])
    assert body["initial_messages"][1] == {"role": "user", "content": "What is 17 + 39?"}
    assert body["label"] == "56" and body["metadata"] is None and body["grade"] is True
    assert body["extra_fields"] == {"row_index": 0, "run_index": 0}
    assert body["agent_timeout_sec"] == 30 and body["grader_timeout_sec"] == 10
    assert body["chat_completions_url"].endswith(f"/v1/rollouts/{first['rollout_id']}")
    token = body["llm_api_key"]
    assert len(token) >= 32
    # the token is nowhere in what the run wrote; the server is gone, its record too
    written = [path for path in out.parent.rglob("*") if path.is_file()]
    assert len(written) > 10
    for path in written:
        assert token not in path.read_text(errors="replace"), path
    assert (out.parent / "results.run" / "server.log").is_file()
    assert not server_pids(str(config.parent.parent.parent / "rollouts"))
    assert not list((config.parent.parent.parent / ".osmosis" / "servers").glob("*.json"))


def test_tool_calls_stream_through_the_bridge(tmp_path: Path) -> None:
    config = server_workspace(
        tmp_path / "ws",
        env={"FAKE_STREAM": "1", "FAKE_TOOLS": "1"},
        model="mock/tool-calculator",
        evaluation={"limit": 4},
    )
    result = run(make_spec(config, tmp_path / "r.json"))
    assert result.summary["eval_fns"]["grader"]["mean"] == 1.0
    messages = runs(result)[0]["messages"]
    assert [m["role"] for m in messages] == ["system", "user", "assistant", "tool", "assistant"]
    call = messages[2]["tool_calls"][0]
    assert call["function"]["name"] == "add"
    assert json.loads(call["function"]["arguments"]) == {"a": 17, "b": 39}
    assert messages[3] == {"role": "tool", "tool_call_id": call["id"], "content": "56"}


def test_failures_stay_with_their_attempt(tmp_path: Path) -> None:
    rows = default_rows(6)
    del rows[5]["label"]  # no label, no metadata: nothing to grade
    config = server_workspace(
        tmp_path / "ws",
        env={
            "FAKE_RAISE_ROWS": "1",
            "FAKE_REMOVE_ROWS": "2",
            "FAKE_NO_REWARD_ROWS": "3",
            "FAKE_SLOW_ROWS": "4",
            "FAKE_SLOW_SECONDS": "5",
        },
        evaluation={"limit": 6, "agent_workflow_timeout_s": 1, "batch_size": 6},
        rows=rows,
    )
    result = run(make_spec(config, tmp_path / "r.json"))
    by_row = runs(result)
    assert by_row[0]["success"] and by_row[0]["scores"] == {"grader": 1.0}
    assert by_row[1]["error"].startswith("agent_error: RuntimeError: the workflow failed")
    assert by_row[1]["err_category"] == "agent_error"
    assert by_row[2]["skipped"] is True and by_row[2]["success"] and by_row[2]["scores"] == {}
    assert "no finite reward" in by_row[3]["error"]
    assert by_row[4]["error"] == "agent workflow timed out after 1.0s"  # the server's words
    assert by_row[4]["err_category"] == "timeout"
    assert by_row[5]["error"] == "row has no label or metadata to grade"
    summary = result.summary
    assert summary["skipped_runs"] == 1 and summary["errored_runs"] == 4
    # the skipped attempt is in no statistic: 1 pass out of 5 scored attempts
    assert summary["eval_fns"]["grader"]["mean"] == pytest.approx(0.2)


def test_the_supervisor_deadline_fails_only_its_attempt(tmp_path: Path) -> None:
    log = tmp_path / "requests.jsonl"
    config = server_workspace(
        tmp_path / "ws",
        env={
            "FAKE_IGNORE_TIMEOUT": "1",
            "FAKE_SLOW_ROWS": "0",
            "FAKE_SLOW_SECONDS": "30",
            "FAKE_LOG": str(log),
        },
        evaluation={"limit": 4, "agent_workflow_timeout_s": 0.5, "grader_timeout_s": 0.5},
    )
    spec = make_spec(config, tmp_path / "r.json")
    kind_of(spec).slack = 0.5
    started = time.monotonic()
    result = run(spec)
    assert time.monotonic() - started < 15
    by_row = runs(result)
    assert by_row[0]["error"].startswith("rollout timed out: no result after 1.5s")
    assert by_row[0]["err_category"] == "timeout"
    assert all(by_row[i]["success"] for i in (1, 2, 3))
    cancelled = [e["body"] for e in requests_logged(log, "cancel")]
    assert {"ids": [by_row[0]["rollout_id"]]} in cancelled
    assert result.summary["status"] == "finished"


def test_a_rollout_finishing_as_it_is_cancelled_keeps_its_result(tmp_path: Path) -> None:
    log = tmp_path / "requests.jsonl"
    config = server_workspace(
        tmp_path / "ws",
        env={
            "FAKE_IGNORE_TIMEOUT": "1",
            "FAKE_IGNORE_CANCEL": "1",
            "FAKE_SLOW_ROWS": "0",
            "FAKE_SLOW_SECONDS": "2",
            "FAKE_LOG": str(log),
        },
        evaluation={"limit": 2, "agent_workflow_timeout_s": 0.5, "grader_timeout_s": 0.5},
    )
    spec = make_spec(config, tmp_path / "r.json")
    kind_of(spec).slack = 0.5
    by_row = runs(run(spec))
    assert requests_logged(log, "cancel")  # the deadline passed and it was cancelled…
    assert by_row[0]["success"] and by_row[0]["scores"] == {"grader": 1.0}  # …yet it finished


@pytest.mark.parametrize(
    ("status", "retried", "category"),
    [("409", True, None), ("422", False, "validation_error"), ("400", False, "http_error")],
)
def test_refused_submissions(tmp_path: Path, status: str, retried: bool, category: str) -> None:
    config = server_workspace(
        tmp_path / "ws",
        env={"FAKE_POST_STATUSES": status},
        evaluation={"limit": 2, "batch_size": 1},
    )
    spec = make_spec(config, tmp_path / "r.json", max_retries=1)
    spec.retry_delay = 0.01
    first = runs(run(spec))[0]
    if retried:  # an id already taken: transient, a fresh id succeeds
        assert first["success"] and first["retries"] == 1
        assert re.fullmatch(r"[0-9a-f]{32}", first["rollout_id"])  # the published shape
    else:  # the server rejected the request itself: not retried
        assert not first["success"] and "retries" not in first
        assert first["error"] == f"the rollout server refused the rollout ({status}: injected)"
        assert first["err_category"] == category


def test_transient_server_errors_are_retried_within_the_attempt(tmp_path: Path) -> None:
    config = server_workspace(
        tmp_path / "ws",
        env={"FAKE_POST_STATUSES": "503,502", "FAKE_POLL_STATUSES": "504,503"},
        evaluation={"limit": 3, "batch_size": 1},
    )
    result = run(make_spec(config, tmp_path / "r.json"))
    assert result.summary["errored_runs"] == 0
    assert result.summary["eval_fns"]["grader"]["mean"] == 1.0


def test_a_lost_lease_is_transient_and_max_retries_retries_it(tmp_path: Path) -> None:
    env = {"FAKE_LEASE_SECONDS": "1", "FAKE_POLL_STATUSES": "503"}
    evaluation = {"limit": 2, "batch_size": 1}
    config = server_workspace(tmp_path / "a", env=env, evaluation=evaluation)
    failed = runs(run(make_spec(config, tmp_path / "a.json")))[0]
    assert failed["err_category"] == "lease_expired"
    assert failed["error"].startswith("lost contact with the rollout server")

    log = tmp_path / "b.log"
    config = server_workspace(
        tmp_path / "b", env={**env, "FAKE_LOG": str(log)}, evaluation=evaluation
    )
    spec = make_spec(config, tmp_path / "b.json", max_retries=1)
    spec.retry_delay = 0.01
    retried = runs(run(spec))[0]
    assert retried["success"] and retried["retries"] == 1
    assert re.fullmatch(r"[0-9a-f]{32}", retried["rollout_id"])  # the published shape
    posted = [e["body"]["rollout_id"] for e in requests_logged(log, "rollout")]
    assert len(set(posted)) == len(posted) >= 3  # a fresh id for every try


def test_a_server_that_dies_is_restarted_and_only_its_attempts_fail(tmp_path: Path) -> None:
    config = server_workspace(
        tmp_path / "ws",
        env={"FAKE_DIE_ON_ROW": "2", "FAKE_DIE_MARK": str(tmp_path / "died")},
        evaluation={"limit": 5, "batch_size": 1},
    )
    notes: list[str] = []
    spec = make_spec(config, tmp_path / "r.json")
    result = run(spec, on_note=notes.append)
    by_row = runs(result)
    assert by_row[2]["error"] == "the rollout server exited (code 17) during this attempt"
    assert all(by_row[i]["success"] for i in (0, 1, 3, 4))
    assert kind_of(spec).restarts == 1
    assert any("restarting it" in n for n in notes)
    log = (tmp_path / "r.run" / "server.log").read_text()
    assert "dying on row 2" in log and log.count("starting main.py") == 2


def test_a_server_that_keeps_dying_stops_the_run(tmp_path: Path) -> None:
    config = server_workspace(
        tmp_path / "ws", env={"FAKE_DIE_ON_ROW": "0"}, evaluation={"limit": 2, "batch_size": 1}
    )
    spec = make_spec(config, tmp_path / "r.json", max_retries=5)
    spec.retry_delay = 0.01
    with pytest.raises(ServerStartError, match="exited 4 times"):
        run(spec)
    assert not server_pids(str(tmp_path / "ws" / "rollouts"))


def test_a_server_that_crashes_at_start_shows_its_output(tmp_path: Path) -> None:
    config = server_workspace(
        tmp_path / "ws", env={"FAKE_CRASH_AT_START": "ModuleNotFoundError: no module named 'x'"}
    )
    with pytest.raises(ServerStartError) as caught:
        run(make_spec(config, tmp_path / "r.json"))
    assert "exited with code 3 before it was ready" in caught.value.message
    assert "| ModuleNotFoundError: no module named 'x'" in caught.value.issues


def test_another_process_on_the_port_is_noticed(tmp_path: Path) -> None:
    config = server_workspace(tmp_path / "ws", env={"FAKE_WRONG_INSTANCE": "1"})
    with pytest.raises(ServerStartError, match="another process"):
        run(make_spec(config, tmp_path / "r.json"))
    assert not server_pids(str(tmp_path / "ws" / "rollouts"))


def test_interrupt_cancels_in_flight_rollouts_and_resume_finishes(tmp_path: Path) -> None:
    log = tmp_path / "requests.jsonl"
    env = {"FAKE_SLOW_ROWS": "5,6,7", "FAKE_SLOW_SECONDS": "60", "FAKE_LOG": str(log)}
    config = server_workspace(tmp_path / "ws", env=env)
    out = tmp_path / "r.json"
    spec = make_spec(config, out)
    runner = Runner(spec)

    def on_progress(progress: Any) -> None:
        if progress.done == 5:
            asyncio.get_running_loop().call_later(0.3, runner.interrupt)

    runner.on_progress = on_progress
    result = asyncio.run(runner.run())
    assert result.summary["status"] == "stopped"
    assert sorted(runs(result)) == [0, 1, 2, 3, 4]
    cancelled = {i for e in requests_logged(log, "cancel") for i in e["body"].get("ids", [])}
    assert len(cancelled) == 3  # the slow rollouts still running were cancelled
    assert not server_pids(str(tmp_path / "ws" / "rollouts"))

    server_workspace(tmp_path / "ws", env={"FAKE_LOG": str(log)})  # the slow rows are fast now
    resumed = run(make_spec(config, out, resume=True))
    assert resumed.summary["status"] == "finished"
    assert sorted(runs(resumed)) == list(range(8))
    assert resumed.summary["eval_fns"]["grader"]["mean"] == 1.0


def test_resume_notices_changed_rollout_sources(tmp_path: Path) -> None:
    config = server_workspace(tmp_path / "ws", evaluation={"limit": 2})
    out = tmp_path / "r.json"
    run(make_spec(config, out))
    (tmp_path / "r.json").unlink()
    with (tmp_path / "ws" / "rollouts" / "fake" / "main.py").open("a") as f:
        f.write("\n# changed\n")
    with pytest.raises(InvalidInputError, match="cannot resume"):
        run(make_spec(config, out, resume=True))


def test_a_server_ignoring_sigterm_is_killed(tmp_path: Path) -> None:
    config = server_workspace(
        tmp_path / "ws", env={"FAKE_IGNORE_TERM": "1"}, evaluation={"limit": 2}
    )
    spec = make_spec(config, tmp_path / "r.json")
    kind_of(spec).stop_grace = 0.5
    run(spec)
    assert "SIGKILL" in (tmp_path / "r.run" / "server.log").read_text()
    assert not server_pids(str(tmp_path / "ws" / "rollouts"))


def test_secrets_reach_the_server_redacted_and_platform_tokens_do_not(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    config = server_workspace(
        tmp_path / "ws",
        env={"FAKE_PRINT_ENV": "MY_SERVICE_KEY,OSMOSIS_TOKEN,VIRTUAL_ENV,FAKE_STREAM"},
        secrets=["MY_SERVICE_KEY"],
        evaluation={"limit": 1},
    )
    monkeypatch.delenv("MY_SERVICE_KEY", raising=False)
    with pytest.raises(InvalidInputError, match="MY_SERVICE_KEY"):
        make_spec(config, tmp_path / "x.json").rollout_kind().prepare()
    monkeypatch.setenv("MY_SERVICE_KEY", "sk-very-secret-value")
    monkeypatch.setenv("OSMOSIS_TOKEN", "osm-platform-token")
    monkeypatch.setenv("VIRTUAL_ENV", "/somewhere/.venv")
    run(make_spec(config, tmp_path / "r.json"))
    log = (tmp_path / "r.run" / "server.log").read_text()
    assert "MY_SERVICE_KEY=***" in log and "sk-very-secret-value" not in log
    assert "OSMOSIS_TOKEN=None" in log and "VIRTUAL_ENV=None" in log


def test_reserved_variables_are_refused(tmp_path: Path) -> None:
    config = server_workspace(tmp_path / "ws", env={"_OSMOSIS_ROLLOUT_PORT": "1"})
    with pytest.raises(ConfigError) as caught:
        load_config(config)
    (problem,) = caught.value.problems
    assert "env._OSMOSIS_ROLLOUT_PORT: is set for the rollout server by the runner" in str(problem)


def sleeper(instance: str | None) -> subprocess.Popen[bytes]:
    """``sleep 60`` in its own group, once it runs: until the child has exec'd, its
    /proc entry shows the parent's command and environment (no instance id), and a
    busy machine can take a while to get there."""
    env = {**os.environ, **({INSTANCE_VAR: instance} if instance else {})}
    proc = subprocess.Popen(["sleep", "60"], start_new_session=True, env=env)
    deadline = time.monotonic() + 30
    while not Path(f"/proc/{proc.pid}/cmdline").read_bytes().startswith(b"sleep\0"):
        assert time.monotonic() < deadline, "sleep never started"
        time.sleep(0.005)
    return proc


def record_of(proc: subprocess.Popen[bytes], owner: int, instance: str, **extra: Any) -> str:
    return json.dumps(
        {
            "pid": proc.pid,
            "pgid": proc.pid,
            "start": _start_time(proc.pid),
            "owner_pid": owner,
            "owner_start": _start_time(owner),
            "instance_id": instance,
            **extra,
        }
    )


def test_orphaned_servers_of_a_dead_run_are_reaped(tmp_path: Path) -> None:
    registry = tmp_path / "servers"
    registry.mkdir()
    orphan, owned = sleeper("a" * 32), sleeper("b" * 32)
    dead = subprocess.Popen(["true"])
    dead.wait()
    try:
        (registry / "a.json").write_text(record_of(orphan, dead.pid, "a" * 32))
        (registry / "b.json").write_text(record_of(owned, os.getpid(), "b" * 32))
        assert reap_orphans(registry, wait=5.0) == [orphan.pid]
        assert orphan.wait(timeout=30) != 0
        assert owned.poll() is None  # its controller (this process) is alive
        assert not (registry / "a.json").exists() and (registry / "b.json").exists()
    finally:
        for proc in (orphan, owned):
            proc.kill()
            proc.wait()


def test_a_planted_record_never_gets_a_process_killed(tmp_path: Path) -> None:
    """A cloned repository may carry .osmosis/servers/*.json naming anything: only a
    process carrying the record's instance id in its environment is ever signalled."""
    registry = tmp_path / "servers"
    registry.mkdir()
    stranger = sleeper(None)  # a process of this user that no run started
    impostor = sleeper("c" * 32)  # carries an instance id, but another one
    in_group = sleeper("f" * 32)
    dead = subprocess.Popen(["true"])
    dead.wait()
    try:
        plants = {
            "stranger": record_of(stranger, dead.pid, "d" * 32),
            "impostor": record_of(impostor, dead.pid, "e" * 32),
            "no-start": record_of(stranger, dead.pid, "d" * 32, start=None),
            # pgid of another group, led by the stranger: never a group we did not lead
            "group": json.dumps(
                {**json.loads(record_of(in_group, dead.pid, "f" * 32)), "pgid": stranger.pid}
            ),
            "me": json.dumps(
                {
                    "pid": os.getpid(),
                    "pgid": os.getpid(),
                    "owner_pid": dead.pid,
                    "start": _start_time(os.getpid()),
                    "instance_id": "g" * 32,
                }
            ),
        }
        for name, text in plants.items():
            (registry / f"{name}.json").write_text(text)
        assert reap_orphans(registry, wait=1.0) == []
        for proc in (stranger, impostor, in_group):
            assert proc.poll() is None
        assert list(registry.glob("*.json")) == []  # the claims are dropped
    finally:
        for proc in (stranger, impostor, in_group):
            proc.kill()
            proc.wait()


NATIVE_EQUIVALENT = """
import re

from osmosis_client.rollout import AgentWorkflow, Grader


class Calculator(AgentWorkflow):
    async def run(self, ctx):
        return [*ctx.prompt, await ctx.chat(ctx.prompt, temperature=0.0)]


class LabelMatch(Grader):
    async def grade(self, ctx):
        numbers = re.findall(r"-?\\d+(?:\\.\\d+)?", ctx.solution_str)
        return 1.0 if numbers and float(numbers[-1]) == float(ctx.ground_truth) else 0.0
"""


def test_server_and_native_results_have_one_shape(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The same rollout, as a server and in-process: the same document, but for the
    three keys server mode adds to each run."""
    monkeypatch.setattr(sys, "path", list(sys.path))
    server_config = server_workspace(tmp_path / "server", evaluation={"limit": 3})
    native_root = tmp_path / "native"
    server_workspace(native_root, evaluation={"limit": 3}, pyproject=False, vendored_sdk=False)
    (native_root / "rollouts" / "fake" / "main.py").write_text(NATIVE_EQUIVALENT)
    server = run(make_spec(server_config, tmp_path / "s.json")).document
    native = run(make_spec(native_root / "configs" / "eval" / "fake.toml", tmp_path / "n.json"))
    native_doc = native.document

    def shape(value: Any) -> Any:
        if isinstance(value, dict):
            return {k: shape(v) for k, v in value.items()}
        if isinstance(value, list):
            return [shape(v) for v in value[:1]]
        return type(value).__name__

    server_runs = [r for row in server["rows"] for r in row["runs"]]
    for run_ in server_runs:
        assert {"rollout_id", "err_category", "trajectory"} <= set(run_)
        for key in ("rollout_id", "err_category", "trajectory"):
            del run_[key]
    for run_ in (r for row in native_doc["rows"] for r in row["runs"]):
        # graded here, in the process (the server's rollout scored itself): timed
        assert run_.pop("grading")["duration_ms"] >= 0
    for doc in (server, native_doc):
        doc["config"]["dataset"] = "…"
    assert shape(server) == shape(native_doc)
    assert server["config"]["rollout_mode"] == "server"
    assert native_doc["config"]["rollout_mode"] == "native"
    assert server["summary"]["eval_fns"] == native_doc["summary"]["eval_fns"]
    assert [r["messages"] for r in server_runs] == [
        r["messages"] for row in native_doc["rows"] for r in row["runs"]
    ]
