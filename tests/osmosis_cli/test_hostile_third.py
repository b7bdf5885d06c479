"""The third hostile audit (issue 33): each finding, a test that failed before its fix.
Names start with the finding they hold (docs/reliability.md, "The third audit")."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
import respx

from tests.osmosis_cli.conftest import Invoke
from tests.osmosis_cli.test_eval_download import FILES, Storage, workspace as workspace


def test_01_a_partial_planted_as_a_symlink_is_never_appended_through(
    invoke: Invoke,
    workspace: Path,
    router: respx.MockRouter,
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    Storage(router, FILES)
    root = workspace / ".osmosis" / "evals" / "brave-otter-7"
    root.mkdir(parents=True)
    outside = tmp_path_factory.mktemp("elsewhere") / "victim.txt"
    outside.write_bytes(b"keep me\n")
    os.symlink(outside, root / ".metrics.json.partial")
    result = invoke("--json", "eval", "download", "brave-otter-7")
    assert result.exit_code == 0, result.stderr
    assert outside.read_bytes() == b"keep me\n"  # nothing appended to the link's target
    metrics = root / "metrics.json"
    assert not metrics.is_symlink() and metrics.read_bytes() == FILES["metrics.json"]
    assert not (root / ".metrics.json.partial").exists()


def test_01_a_journal_or_log_planted_as_a_symlink_is_refused(tmp_path: Path) -> None:
    from osmosis_client._fs import open_nofollow

    outside = tmp_path / "victim"
    outside.write_text("keep")
    link = tmp_path / "journal.jsonl"
    link.symlink_to(outside)
    with pytest.raises(OSError, match="symbolic link"):
        open_nofollow(link, os.O_WRONLY | os.O_CREAT | os.O_APPEND)
    assert outside.read_text() == "keep"


def test_01_a_journal_symlink_is_refused_with_one_clear_error(tmp_path: Path) -> None:
    from osmosis_client.errors import InvalidInputError
    from osmosis_local_runner.run.session.journal import Journal

    outside = tmp_path / "victim"
    outside.write_text("keep")
    link = tmp_path / "run.journal.jsonl"
    link.symlink_to(outside)
    with pytest.raises(InvalidInputError) as caught:
        Journal(link, {"x": 1}, resume_from=0)
    assert "symbolic link" in caught.value.message
    assert outside.read_text() == "keep"


def test_02_a_warm_directory_reached_through_a_symlink_is_not_trusted(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from osmosis_local_runner.server import warm

    real = tmp_path / "real"
    real.mkdir(mode=0o700)
    link = tmp_path / "link"
    link.symlink_to(real)
    assert warm.warm_dir({"OSMOSIS_WARM_DIR": str(real)}) == real
    assert warm.warm_dir({"OSMOSIS_WARM_DIR": str(link)}) is None


def test_02_nothing_is_sent_to_a_socket_another_user_serves(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The request holds the server's environment (secrets, the bridge token): it goes
    only to a warm interpreter of this user, by the kernel's word on the peer."""
    import asyncio
    import socket as socket_module
    import sys

    from osmosis_local_runner.server import warm

    directory = tmp_path / "w"
    directory.mkdir(mode=0o700)
    interpreter = warm.Warm(Path(sys.executable), [], {}, directory)
    received: list[bytes] = []

    async def main() -> object:
        async def on_connect(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            received.append(await reader.read())
            writer.close()

        server = await asyncio.start_unix_server(on_connect, str(interpreter.socket))
        async with server:
            return await interpreter.spawn(tmp_path / "main.py", {"SECRET": "s3cret"}, tmp_path)

    left, right = socket_module.socketpair(socket_module.AF_UNIX)
    with left, right:
        assert warm.peer_is_us(left)
        monkeypatch.setattr(warm.os, "getuid", lambda: os.geteuid() + 4242)
        assert not warm.peer_is_us(left)
    assert asyncio.run(main()) is None  # started cold instead
    assert b"s3cret" not in b"".join(received)
