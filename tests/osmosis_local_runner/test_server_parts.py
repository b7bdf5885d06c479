"""Server mode's parts without a server: detection, the rollout's environment (with a
fake ``uv``), requests from rows, conversations from trajectories, capacity."""

from __future__ import annotations

import json
import stat
import sys
from pathlib import Path

import pytest

from osmosis_client.errors import InvalidInputError
from osmosis_local_runner.run.execute.dataset import make_row
from osmosis_local_runner.run.execute.discovery import source_digest
from osmosis_local_runner.run.session.journal import run_dir
from osmosis_local_runner.server import environment
from osmosis_local_runner.server.detect import detect
from osmosis_local_runner.server.environment import RolloutEnvironmentError, resolve
from osmosis_local_runner.server.output import Redactor
from osmosis_local_runner.server.process import capacity_of
from osmosis_local_runner.server.protocol import (
    rollout_request,
    sample_messages,
    trajectory_messages,
)

# ------------------------------------------------------------------ detection


def rollout(tmp_path: Path, main: str = "print('hi')\n", pyproject: str | None = None) -> Path:
    folder = tmp_path / "rollouts" / "calc"
    folder.mkdir(parents=True)
    (folder / "main.py").write_text(main)
    if pyproject is not None:
        (folder / "pyproject.toml").write_text(pyproject)
    return folder


@pytest.mark.parametrize(
    "pyproject",
    [
        '[project]\nname="x"\ndependencies = ["osmosis-ai[server]>=0.3,<0.4"]\n',
        '[project]\nname="x"\ndependencies = ["Osmosis_AI==0.3.7"]\n',
        '[project]\nname="x"\n[project.optional-dependencies]\nrl = ["osmosis.ai"]\n',
        '[dependency-groups]\ndev = ["osmosis-ai"]\n',
        '[tool.poetry.dependencies]\nosmosis-ai = "^0.3"\n',
    ],
)
def test_a_pyproject_depending_on_the_sdk_means_server_mode(tmp_path: Path, pyproject: str) -> None:
    folder = rollout(tmp_path, pyproject=pyproject)
    found = detect(folder, folder / "main.py")
    assert found.mode == "server"
    assert found.reason == "rollouts/calc/pyproject.toml depends on osmosis-ai"


@pytest.mark.parametrize(
    "source",
    [
        "from osmosis_ai.rollout.server import create_rollout_server\n",
        "import osmosis_ai\n",
        "def f():\n    import osmosis_ai.rollout as r\n",
    ],
)
def test_an_entrypoint_importing_the_sdk_means_server_mode(tmp_path: Path, source: str) -> None:
    folder = rollout(tmp_path, main=source)
    found = detect(folder, folder / "main.py")
    assert (found.mode, found.reason) == ("server", "rollouts/calc/main.py imports osmosis_ai")


@pytest.mark.parametrize(
    ("main", "pyproject"),
    [
        ("from osmosis_client.rollout import AgentWorkflow\n", None),
        (
            "import osmosis_aix\nfrom .osmosis_ai import x\n",
            '[project]\ndependencies = ["httpx"]\n',
        ),
        ("def broken(:\n", "not toml [[["),
        ("x = 'import osmosis_ai'\n", '[project]\ndependencies = ["osmosis-ai-tools"]\n'),
    ],
)
def test_anything_else_is_native(tmp_path: Path, main: str, pyproject: str | None) -> None:
    folder = rollout(tmp_path, main=main, pyproject=pyproject)
    assert detect(folder, folder / "main.py").mode == "native"


def test_an_explicit_mode_wins_and_is_checked(tmp_path: Path) -> None:
    folder = rollout(tmp_path, main="import osmosis_ai\n")
    found = detect(folder, folder / "main.py", chosen="native", chosen_by="[local] mode")
    assert (found.mode, found.reason) == ("native", "set by [local] mode")
    with pytest.raises(InvalidInputError, match="--rollout-mode must be 'server' or 'native'"):
        detect(folder, folder / "main.py", chosen="remote", chosen_by="--rollout-mode")


def test_the_source_digest_skips_environments_and_sees_lock_changes(tmp_path: Path) -> None:
    folder = rollout(tmp_path, pyproject="[project]\n")
    before = source_digest(folder)
    (folder / ".venv" / "lib").mkdir(parents=True)
    (folder / ".venv" / "lib" / "big.py").write_text("x = 1\n")
    (folder / "__pycache__").mkdir()
    (folder / "__pycache__" / "main.cpython-312.py").write_text("junk")
    assert source_digest(folder) == before
    (folder / "uv.lock").write_text("version = 1\n")
    assert source_digest(folder) != before


def test_the_run_directory_sits_beside_the_results(tmp_path: Path) -> None:
    assert run_dir(tmp_path / "results.json") == tmp_path / "results.run"
    assert run_dir(tmp_path / "results") == tmp_path / "results.run"
    assert run_dir(tmp_path / "odd.run") == tmp_path / "odd.run.d"


# ------------------------------------------------------------------ environment


def fake_uv(tmp_path: Path, *, fail: bool = False) -> tuple[Path, Path]:
    """A ``uv`` that logs its calls; ``sync`` makes the environment uv would (at
    ``UV_PROJECT_ENVIRONMENT``, else ``.venv`` of the project; its python = this one) and
    locks the project it was given."""
    log = tmp_path / "uv-calls.jsonl"
    script = tmp_path / "bin" / "uv"
    script.parent.mkdir()
    script.write_text(
        f"""#!{sys.executable}
import json, os, sys
from pathlib import Path
with open({str(log)!r}, "a") as f:
    f.write(json.dumps({{"argv": sys.argv[1:], "downloads": os.environ.get("UV_PYTHON_DOWNLOADS"),
                         "venv": os.environ.get("VIRTUAL_ENV"),
                         "environment": os.environ.get("UV_PROJECT_ENVIRONMENT")}}) + "\\n")
args = sys.argv[1:]
project = Path(args[args.index("--project") + 1])
if {fail!r}:
    print("  × No solution found when resolving dependencies:", file=sys.stderr)
    print("  ╰─▶ Because nothing matches osmosis-ai>=9, we can conclude it is unsatisfiable.",
          file=sys.stderr)
    sys.exit(1)
venv = Path(os.environ.get("UV_PROJECT_ENVIRONMENT") or project / ".venv")
(venv / "bin").mkdir(parents=True, exist_ok=True)
(venv / "lib" / "python3.12" / "site-packages").mkdir(parents=True, exist_ok=True)
(venv / "pyvenv.cfg").write_text("home = x\\n")
if not (venv / "bin" / "python").exists():
    (venv / "bin" / "python").symlink_to({sys.executable!r})
(project / "uv.lock").write_text("version = 1\\n")
"""
    )
    script.chmod(script.stat().st_mode | stat.S_IEXEC)
    return script, log


def calls(log: Path) -> list[dict[str, object]]:
    return [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []


@pytest.fixture
def sdk_rollout(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setattr(environment, "MIN_PYTHON", (3, 10))
    monkeypatch.setenv("OSMOSIS_ROLLOUT_ENVS", str(tmp_path / "envs"))
    monkeypatch.delenv("UV_PROJECT_ENVIRONMENT", raising=False)
    folder = rollout(tmp_path, pyproject='[project]\ndependencies = ["osmosis-ai"]\n')
    (folder / "osmosis_ai").mkdir()
    (folder / "osmosis_ai" / "__init__.py").write_text("")
    return folder


def test_uv_syncs_once_then_only_when_the_project_changes(
    tmp_path: Path, sdk_rollout: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    uv, log = fake_uv(tmp_path)
    monkeypatch.setenv("VIRTUAL_ENV", "/our/own/venv")
    monkeypatch.delenv("UV_PYTHON_DOWNLOADS", raising=False)
    before = sorted(p.name for p in sdk_rollout.iterdir())
    notes: list[str] = []
    first = resolve(sdk_rollout, uv=str(uv), note=notes.append)
    assert first.origin == "uv" and first.sync == "synced"
    (home,) = (tmp_path / "envs").iterdir()
    assert home.name.startswith("calc-")
    assert first.executable == home / "venv" / "bin" / "python"
    assert first.version[:2] == sys.version_info[:2]
    assert notes == ["syncing the rollout's environment: uv sync --project rollouts/calc"]
    assert sorted(p.name for p in sdk_rollout.iterdir()) == before  # no uv.lock, no .venv
    second = resolve(sdk_rollout, uv=str(uv))
    assert second.sync == "in sync"
    (sdk_rollout / "pyproject.toml").write_text('[project]\ndependencies = ["osmosis-ai", "x"]\n')
    assert resolve(sdk_rollout, uv=str(uv)).sync == "synced"
    assert "x" in (home / "project" / "pyproject.toml").read_text()  # the copy follows
    made = calls(log)
    assert [c["argv"] for c in made] == [
        ["sync", "--project", str(home / "project"), "--no-install-project"]
    ] * 2
    assert all(c["downloads"] == "never" and c["venv"] is None for c in made)
    assert all(c["environment"] == str(home / "venv") for c in made)
    assert "uv, in sync" in second.describe()


def test_a_project_uv_must_read_in_place_is_synced_in_place(
    tmp_path: Path, sdk_rollout: Path
) -> None:
    (sdk_rollout / "pyproject.toml").write_text(
        '[project]\ndependencies = ["osmosis-ai", "mylib"]\n'
        '[tool.uv.sources]\nmylib = { path = "../../libs/mylib" }\n'
    )
    uv, log = fake_uv(tmp_path)
    found = resolve(sdk_rollout, uv=str(uv))
    assert found.executable == sdk_rollout / ".venv" / "bin" / "python"
    assert calls(log)[0]["argv"] == ["sync", "--project", str(sdk_rollout)]


def test_bytecode_written_by_a_run_is_not_a_change_but_a_package_installed_by_hand_is(
    tmp_path: Path, sdk_rollout: Path
) -> None:
    uv, _ = fake_uv(tmp_path)
    found = resolve(sdk_rollout, uv=str(uv))
    assert found.sync == "synced"
    site = found.executable.parent.parent / "lib" / "python3.12" / "site-packages"
    (site / "__pycache__").mkdir()  # what running the server does without PYTHONDONTWRITEBYTECODE
    (site / "__pycache__" / "typing_extensions.cpython-312.pyc").write_bytes(b"")
    assert resolve(sdk_rollout, uv=str(uv)).sync == "in sync"
    (site / "requests-2.32.0.dist-info").mkdir()  # pip install requests, by hand
    assert resolve(sdk_rollout, uv=str(uv)).sync == "synced"


def test_a_failed_sync_shows_uvs_own_error(tmp_path: Path, sdk_rollout: Path) -> None:
    uv, _ = fake_uv(tmp_path, fail=True)
    with pytest.raises(RolloutEnvironmentError) as caught:
        resolve(sdk_rollout, uv=str(uv))
    assert caught.value.message == "uv sync --project rollouts/calc failed (exit 1); uv said:"
    assert caught.value.problems == [  # type: ignore[attr-defined]
        "  × No solution found when resolving dependencies:",
        "  ╰─▶ Because nothing matches osmosis-ai>=9, we can conclude it is unsatisfiable.",
    ]
    assert "UV_PYTHON" in (caught.value.hint or "")


def test_an_interpreter_or_a_venv_directory_can_be_named(tmp_path: Path, sdk_rollout: Path) -> None:
    found = resolve(sdk_rollout, given=Path(sys.executable), uv=False)
    assert found.origin == "--rollout-python" and found.sdk is None
    venv = Path(sys.executable).parent.parent
    assert resolve(sdk_rollout, given=venv, given_by="[local] rollout_python", uv=False).origin == (
        "[local] rollout_python"
    )
    with pytest.raises(RolloutEnvironmentError, match="does not exist"):
        resolve(sdk_rollout, given=tmp_path / "nope", uv=False)


def test_the_rollouts_own_venv_is_the_fallback(sdk_rollout: Path) -> None:
    with pytest.raises(RolloutEnvironmentError) as caught:
        resolve(sdk_rollout, uv=False)
    assert caught.value.code == "NO_ROLLOUT_PYTHON"
    assert "rollouts/calc/.venv" in caught.value.message
    (sdk_rollout / ".venv" / "bin").mkdir(parents=True)
    (sdk_rollout / ".venv" / "bin" / "python").symlink_to(sys.executable)
    assert resolve(sdk_rollout, uv=False).origin == ".venv"


def test_an_old_python_or_a_missing_sdk_is_refused(
    tmp_path: Path, sdk_rollout: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(environment, "MIN_PYTHON", (99, 0))
    with pytest.raises(RolloutEnvironmentError) as caught:
        resolve(sdk_rollout, given=Path(sys.executable), uv=False)
    assert caught.value.code == "ROLLOUT_PYTHON_TOO_OLD"
    assert "need Python >= 3.12" in caught.value.message
    monkeypatch.setattr(environment, "MIN_PYTHON", (3, 10))
    (sdk_rollout / "osmosis_ai" / "__init__.py").unlink()
    (sdk_rollout / "osmosis_ai").rmdir()
    with pytest.raises(RolloutEnvironmentError) as caught:
        resolve(sdk_rollout, given=Path(sys.executable), uv=False)
    assert caught.value.code == "ROLLOUT_SDK_MISSING"


def test_a_broken_interpreter_is_reported(tmp_path: Path, sdk_rollout: Path) -> None:
    broken = tmp_path / "python"
    broken.write_text("#!/bin/sh\necho 'pyenv: python3.12: command not found' >&2\nexit 127\n")
    broken.chmod(0o755)
    with pytest.raises(RolloutEnvironmentError) as caught:
        resolve(sdk_rollout, given=broken, uv=False)
    assert caught.value.message.endswith("pyenv: python3.12: command not found")


# ------------------------------------------------------------------ protocol


def test_a_request_carries_every_key_from_the_row() -> None:
    row = make_row(
        3,
        4,
        {
            "system_prompt": "Be brief.",
            "user_prompt": "Hi",
            "ground_truth": "42",
            "label": "ignored",
            "metadata": json.dumps({"difficulty": "hard"}),
            "other": 1,
        },
    )
    body = rollout_request(
        row,
        2,
        rollout_id="abc-3-2",
        chat_completions_url="http://127.0.0.1:1/v1/rollouts/abc-3-2",
        api_key="tok",
        agent_timeout=float("inf"),
        grader_timeout=10.0,
    )
    assert body == {
        "initial_messages": [
            {"role": "system", "content": "Be brief."},
            {"role": "user", "content": "Hi"},
        ],
        "label": "42",
        "metadata": {"difficulty": "hard"},
        "rollout_id": "abc-3-2",
        "chat_completions_url": "http://127.0.0.1:1/v1/rollouts/abc-3-2",
        "llm_api_key": "tok",
        "grade": True,
        "agent_timeout_sec": None,
        "grader_timeout_sec": 10.0,
        "extra_fields": {"row_index": 3, "run_index": 2},
    }
    plain = rollout_request(
        make_row(0, 1, {"user_prompt": "Hi", "label": "7"}),
        0,
        rollout_id="x",
        chat_completions_url="u",
        api_key="t",
        agent_timeout=None,
        grader_timeout=None,
    )
    assert plain["label"] == "7" and plain["metadata"] is None


def test_conversations_come_back_from_atif_trajectories() -> None:
    trajectory = {
        "steps": [
            {"step_id": 1, "source": "system", "message": "Use tools."},
            {"step_id": 2, "source": "user", "message": [{"type": "text", "text": "2+3?"}]},
            {
                "step_id": 3,
                "source": "agent",
                "message": "",
                "reasoning_content": "add them",
                "tool_calls": [
                    {"tool_call_id": "c1", "function_name": "add", "arguments": {"a": 2, "b": 3}},
                    {"tool_call_id": "c2", "function_name": "odd", "arguments": {"_raw": "x y"}},
                ],
                "observation": {
                    "results": [
                        {"source_call_id": "c1", "content": "5"},
                        {"content": "?", "extra": {"tool_call_id": "c2"}},
                    ]
                },
            },
            {"step_id": 4, "source": "agent", "message": "5"},
            {"step_id": 5, "source": "user", "message": "x", "extra": {"original_role": "critic"}},
            {
                "step_id": 6,
                "source": "system",
                "message": "",
                "observation": {"results": [{"content": "late"}]},
                "extra": {"original_role": "tool"},
            },
        ]
    }
    assert trajectory_messages(trajectory) == [
        {"role": "system", "content": "Use tools."},
        {"role": "user", "content": [{"type": "text", "text": "2+3?"}]},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": "c1",
                    "type": "function",
                    "function": {"name": "add", "arguments": '{"a": 2, "b": 3}'},
                },
                {"id": "c2", "type": "function", "function": {"name": "odd", "arguments": "x y"}},
            ],
            "reasoning_content": "add them",
        },
        {"role": "tool", "tool_call_id": "c1", "content": "5"},
        {"role": "tool", "tool_call_id": "c2", "content": "?"},
        {"role": "assistant", "content": "5"},
        {"role": "critic", "content": "x"},
        {"role": "tool", "tool_call_id": None, "content": "late"},
    ]
    assert trajectory_messages({"steps": "garbage"}) == []


def test_sample_messages_only_when_they_are_chat_messages() -> None:
    chat = [{"role": "user", "content": "a"}]
    assert sample_messages({"messages": chat}) == chat
    assert sample_messages({"messages": [{"type": "function_call", "name": "f"}]}) is None
    assert sample_messages(None) is None


@pytest.mark.parametrize(
    ("body", "capacity"),
    [
        ({"concurrency": {"max_concurrent": 8, "queued": 0}}, 8),
        ({"concurrency": {"max_concurrent": None}}, None),
        ({"concurrency": {"max_queue_depth": 16}}, 16),
        ({"concurrency": {"max_concurrent": 0}}, 4),
        ({"status": "ok"}, 4),
    ],
)
def test_capacity_from_health(body: dict[str, object], capacity: int | None) -> None:
    assert capacity_of(body) == capacity


def test_the_head_of_a_cut_line_never_keeps_the_start_of_a_secret() -> None:
    redact = Redactor(["sk-live-0123456789"])
    assert redact.head("x token=sk-live-0123", 100) == "x "  # the rest of the line was dropped
    assert redact.head("x sk-live-0123456789 y", 100) == "x *** y"
    assert redact.head("see https://user:pa", 100) == "see "  # URL credentials cut short too
    assert redact.head("plain words here", 10) == "plain word"  # not a secret: kept


def test_the_redactor_hides_secrets_and_url_credentials() -> None:
    redact = Redactor(["sk-secret-1", "abc"])  # too short to redact safely: kept
    redact.add("tok-2222")
    text = redact("key sk-secret-1 tok-2222 abc https://u:p@host/x")
    assert text == "key *** *** abc https://***@host/x"


def test_a_relative_rollout_python_is_made_absolute_not_resolved(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`--rollout-python rollouts/x/.venv` from the project: the probe and the server run in
    the rollout's folder, where the relative path named nothing (found by bench/edit_loop)."""
    import sys

    from osmosis_local_runner.server.environment import _given_python

    venv = tmp_path / "rollouts" / "x" / ".venv" / "bin"
    venv.mkdir(parents=True)
    (venv / "python").symlink_to(sys.executable)
    monkeypatch.chdir(tmp_path)
    (found,) = _given_python(Path("rollouts/x/.venv"), "--rollout-python")
    assert found == str(tmp_path / "rollouts" / "x" / ".venv" / "bin" / "python")  # not resolved
