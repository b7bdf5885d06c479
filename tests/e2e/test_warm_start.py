"""Warm starts of rollout servers (issue 25): after a first cold run, a warm interpreter
holding the rollout's *installed* packages imported forks each next run's server — and
never serves stale code: an edited rollout file is picked up, a changed installed package
starts another warm interpreter. It dies when idle; its servers die with their
controller; a package that starts a thread at import is refused (forking is unsafe).

The rollout is the independent server double, made to import ``slowpkg``: a package
installed in the rollout's own virtual environment that logs every import of itself
(pid, version). No test asserts a time: who imported what, and when, tells.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from tests.server_workspace import RELAXED_CLI, server_pids, server_workspace

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(not Path("/proc").is_dir(), reason="needs Linux /proc"),
]
CLI = RELAXED_CLI
SLOWPKG = """\
import os, threading, time
VERSION = {version!r}
os.environ["SLOWPKG_SET_AT_IMPORT"] = "yes"  # as litellm sets TIKTOKEN_CACHE_DIR
with open(os.environ["SLOWPKG_LOG"], "a") as log:
    log.write(f"{{os.getpid()}} {{VERSION}}\\n")
time.sleep(0.3)  # a heavy import, in miniature
if {thread!r}:
    threading.Thread(target=time.sleep, args=(60,), daemon=True).start()
"""


def wait_for(condition: Callable[[], bool], what: str, seconds: float = 60.0) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.05)


class Project:
    def __init__(
        self, root: Path, *, venv_inside: bool = False, env: dict[str, str] | None = None
    ) -> None:
        self.root = root / "ws"
        self.log = root / "imports.log"
        self.warm = root / "warm"
        rollout = self.root / "rollouts" / "fake"
        self.venv = rollout / ".venv" if venv_inside else root / "venv"
        self.config = server_workspace(self.root, env={"SLOWPKG_LOG": str(self.log), **(env or {})})
        subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(self.venv)], check=True)
        main = self.root / "rollouts" / "fake" / "main.py"
        text = main.read_text()
        marker = "from __future__ import annotations\n"
        main.write_text(text.replace(marker, marker + "import slowpkg  # noqa\n", 1))
        self.install("1")

    @property
    def site_packages(self) -> Path:
        return next(self.venv.glob("lib/python3*/site-packages"))

    def install(self, version: str, *, thread: bool = False, keep_info: bool = False) -> None:
        """slowpkg ``version``; ``keep_info``: its file edited in place, the *.dist-info
        unchanged (a package under development, a patch in site-packages)."""
        if keep_info:
            (self.site_packages / "slowpkg.py").write_text(
                SLOWPKG.format(version=version, thread=thread)
            )
            return
        for old in self.site_packages.glob("slowpkg-*.dist-info"):
            for file in old.iterdir():
                file.unlink()
            old.rmdir()
        info = self.site_packages / f"slowpkg-{version}.0.dist-info"
        info.mkdir()
        (info / "METADATA").write_text(f"Name: slowpkg\nVersion: {version}.0\n")
        (self.site_packages / "slowpkg.py").write_text(
            SLOWPKG.format(version=version, thread=thread)
        )

    def env(self, **more: str) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if not k.startswith("OSMOSIS_")} | {
            "OSMOSIS_WARM": "0"
        }
        env.update(
            OSMOSIS_CONFIG_DIR=str(self.root / "cfg"),
            OSMOSIS_WARM="1",
            OSMOSIS_WARM_DIR=str(self.warm),
            OSMOSIS_WARM_IDLE="60",
        )
        return {**env, **more}

    def command(self, output: str, *args: str) -> list[str]:
        python = str(self.venv / "bin" / "python")
        return [
            *CLI,
            "eval",
            "run",
            "configs/eval/fake.toml",
            "--rollout-python",
            python,
            "-o",
            output,
            *args,
        ]

    def run(self, output: str, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
        done = subprocess.run(
            self.command(output, *args),
            cwd=self.root,
            env=self.env(**env),
            capture_output=True,
            text=True,
            timeout=180,
        )
        assert done.returncode == 0, done.stderr
        return done

    def imports(self) -> list[tuple[int, str]]:
        if not self.log.exists():
            return []
        return [
            (int(p), v)
            for p, v in (line.split() for line in self.log.read_text().split("\n") if line)
        ]

    def server_log(self, output: str) -> str:
        return (self.root / output.replace(".json", ".run") / "server.log").read_text()

    def warm_pids(self) -> list[int]:
        return server_pids(f"serve {self.warm}")


@pytest.fixture
def project(tmp_path: Path) -> Iterator[Project]:
    made = Project(tmp_path)
    try:
        yield made
    finally:
        for pid in made.warm_pids():
            os.kill(pid, signal.SIGKILL)


def test_the_next_runs_are_forked_warm_and_never_run_stale_code(project: Project) -> None:
    first = project.run("r1.json")
    assert "forked by the warm interpreter" not in project.server_log("r1.json")
    assert "keeping the installed packages of rollouts/fake/main.py imported" in first.stderr
    # the promise it makes is for the runs after the warm interpreter is ready
    assert "once it is ready" in first.stderr and "as long as this server took" in first.stderr
    # the cold server imported it itself; then the warm interpreter, started for the next
    # runs, imports it once
    wait_for(lambda: len(project.imports()) == 2, "the warm interpreter's import")
    (server, version), (zygote, _) = project.imports()
    assert version == "1" and zygote != server and project.warm_pids() == [zygote]

    project.run("r2.json")
    assert "forked by the warm interpreter" in project.server_log("r2.json")
    assert len(project.imports()) == 2  # the forked server did not import it again
    results = json.loads((project.root / "r2.json").read_text())
    assert results["summary"]["status"] == "finished" and results["summary"]["errored_runs"] == 0

    # an edit of the rollout's own code is picked up
    main = project.root / "rollouts" / "fake" / "main.py"
    main.write_text(
        main.read_text().replace(
            "import slowpkg  # noqa\n", "import slowpkg  # noqa\nprint('EDITED', flush=True)\n"
        )
    )
    project.run("r3.json")
    assert "EDITED" in project.server_log("r3.json")
    assert "forked by the warm interpreter" in project.server_log("r3.json")

    # a changed installed package: another key — this run is cold, and imports version 2
    project.install("2")
    project.run("r4.json")
    assert "forked by the warm interpreter" not in project.server_log("r4.json")
    assert project.imports()[2][1] == "2"
    wait_for(lambda: len(project.imports()) == 4, "the new warm interpreter's import")
    project.run("r5.json")
    log = project.server_log("r5.json")
    assert "forked by the warm interpreter" in log
    assert [v for _, v in project.imports()] == ["1", "1", "2", "2"]


def test_warm_starts_off_is_every_run_cold(project: Project) -> None:
    project.run("r1.json", OSMOSIS_WARM="0")
    project.run("r2.json", OSMOSIS_WARM="0")
    assert [v for _, v in project.imports()] == ["1", "1"]  # each server imported it
    assert not project.warm_pids() and not any(project.warm.glob("*.sock"))


def test_a_forked_server_dies_with_its_controller(project: Project) -> None:
    project.run("r1.json")
    wait_for(lambda: len(project.imports()) == 2, "the warm interpreter")
    slow = project.command("r2.json", "--model", "mock/calculator@30000", "-q")
    proc = subprocess.Popen(
        slow,
        cwd=project.root,
        env=project.env(),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    record = project.root / "r2.run" / "server.json"
    try:
        wait_for(record.exists, "the forked server's record")
        pid = json.loads(record.read_text())["pid"]
        wait_for(lambda: "forked by the warm interpreter" in project.server_log("r2.json"), "fork")
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=30)
        wait_for(lambda: not Path(f"/proc/{pid}").exists() or _zombie(pid), "the server to die", 30)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert project.warm_pids()  # the warm interpreter itself stays for the next run


def _zombie(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()[0] == "Z"
    except OSError:
        return True


def test_an_idle_warm_interpreter_exits_and_removes_its_socket(project: Project) -> None:
    project.run("r1.json", OSMOSIS_WARM_IDLE="1")
    wait_for(lambda: len(project.imports()) == 2, "the warm interpreter")
    wait_for(lambda: not project.warm_pids(), "the idle exit", 30)
    assert not any(project.warm.glob("*.sock"))


def test_a_package_that_starts_a_thread_at_import_is_never_forked(project: Project) -> None:
    project.install("1", thread=True)
    project.run("r1.json")
    wait_for(lambda: any(project.warm.glob("*.refused")), "the refusal")
    refused = next(project.warm.glob("*.refused")).read_text()
    assert "started threads" in refused
    second = project.run("r2.json")  # cold again, and fine
    assert "forked by the warm interpreter" not in project.server_log("r2.json")
    # issue 34: the run says why it starts cold (the first one had promised warm starts)
    assert "warm starts are off for rollouts/fake/main.py" in second.stderr
    assert "started threads" in second.stderr
    assert [v for _, v in project.imports()] == ["1", "1", "1"]  # cold, the refused one, cold


def test_a_suite_starts_its_rollout_warm_once(project: Project) -> None:
    suite = project.root / "configs" / "eval" / "suite.toml"
    python = str(project.venv / "bin" / "python")
    suite.write_text(
        'suite = "warm"\nrollout = "fake"\nentrypoint = "main.py"\nmodel_path = "mock/calculator"\n'
        'dataset = "arithmetic"\nlimit = 4\n\n[env]\nSLOWPKG_LOG = '
        + json.dumps(str(project.log))
        + "\n\n"
        "[[ablation]]\n[ablation.sweep]\nn = [1, 2, 3]\n"
    )
    done = subprocess.run(
        [
            *CLI,
            "eval",
            "run",
            "configs/eval/suite.toml",
            "-o",
            "suite",
            "-q",
            "--rollout-python",
            python,
        ],
        cwd=project.root,
        env=project.env(),
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    logs = sorted((project.root / "suite").glob("*.run/server.log"))
    assert len(logs) == 3
    forked = ["forked by the warm interpreter" in log.read_text() for log in logs]
    assert forked.count(False) == 1  # one cold start: the first entry's
    assert len(project.imports()) == 2  # that server's import, and the warm interpreter's


# ------------------------------------------------------------------ issue 34: every layout


def forked_warm(project: Project, output: str) -> bool:
    return "forked by the warm interpreter" in project.server_log(output)


def test_a_venv_inside_the_rollout_folder_is_warm_too(tmp_path: Path) -> None:
    """rollouts/<name>/.venv (or a uv project synced in place): excluding the rollout's
    folder used to exclude its site-packages, so nothing was ever pre-imported."""
    project = Project(tmp_path, venv_inside=True)
    try:
        project.run("r1.json")
        wait_for(lambda: len(project.imports()) == 2, "the warm interpreter's import")
        project.run("r2.json")
        assert forked_warm(project, "r2.json") and len(project.imports()) == 2
    finally:
        for pid in project.warm_pids():
            os.kill(pid, signal.SIGKILL)


def test_the_environment_set_at_import_reaches_a_forked_server(project: Project) -> None:
    main = project.root / "rollouts" / "fake" / "main.py"
    main.write_text(
        main.read_text().replace(
            "import slowpkg  # noqa\n",
            "import slowpkg  # noqa\nimport os as _os\n"
            "print('SET_AT_IMPORT=' + str(_os.environ.get('SLOWPKG_SET_AT_IMPORT')), flush=True)\n",
        )
    )
    project.run("r1.json")
    assert "SET_AT_IMPORT=yes" in project.server_log("r1.json")  # cold: the import set it
    wait_for(lambda: len(project.imports()) == 2, "the warm interpreter")
    project.run("r2.json")
    log = project.server_log("r2.json")
    assert forked_warm(project, "r2.json") and "SET_AT_IMPORT=yes" in log


def test_an_installed_file_edited_in_place_is_never_served_stale(project: Project) -> None:
    project.run("r1.json")
    wait_for(lambda: any(project.warm.glob("*.sock.ready")), "the warm interpreter to be ready")
    project.install("1-edited", keep_info=True)  # no *.dist-info change: the same key
    project.run("r2.json")
    assert not forked_warm(project, "r2.json")  # refused as stale, started cold
    assert project.imports()[2][1] == "1-edited"
    wait_for(lambda: len(project.imports()) == 4, "a fresh warm interpreter")
    project.run("r3.json")
    assert forked_warm(project, "r3.json")
    assert [v for _, v in project.imports()] == ["1", "1", "1-edited", "1-edited"]


def test_a_large_environment_is_forked_warm_and_no_fd_leaks(tmp_path: Path) -> None:
    """A server environment over one socket read (a long [env] value) reset the
    connection and every run started cold; a malformed request leaked its fd."""
    import socket as socket_module

    big = {f"BIG_SETTING_{i}": "x" * 40_000 for i in range(4)}  # 160 KB, no value over 128 KiB
    project = Project(tmp_path, env=big)
    try:
        project.run("r1.json")
        wait_for(lambda: len(project.imports()) == 2, "the warm interpreter")
        project.run("r2.json")
        assert forked_warm(project, "r2.json")
        (zygote,) = project.warm_pids()
        fds = len(list(Path(f"/proc/{zygote}/fd").iterdir()))
        sock_path = next(project.warm.glob("*.sock"))
        for payload in (b"not json\n", b"[1, 2]\n", b"{"):
            read_end, write_end = os.pipe()
            with socket_module.socket(socket_module.AF_UNIX) as conn:
                conn.connect(str(sock_path))
                socket_module.send_fds(conn, [payload], [write_end])
                conn.shutdown(socket_module.SHUT_WR)
                conn.settimeout(10)
                assert conn.recv(100) == b""  # refused, closed
            os.close(read_end)
            os.close(write_end)
        assert len(list(Path(f"/proc/{zygote}/fd").iterdir())) == fds
    finally:
        for pid in project.warm_pids():
            os.kill(pid, signal.SIGKILL)
