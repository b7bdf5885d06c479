"""CLI start-up stays light; progress output follows the terminal policy."""

from __future__ import annotations

import io
import subprocess
import sys

from osmosis_cli.eval_local import _ProgressDisplay
from osmosis_cli.output import Output
from osmosis_local_runner.runner import Progress

HEAVY = ["httpx", "pydantic", "keyring", "rich.console", "aiohttp", "git", "tomlkit", "yaml"]


def test_help_imports_no_heavy_module() -> None:
    code = (
        "import sys\nfrom osmosis_cli.main import main\n"
        "sys.argv = ['osmosis', '--help']\n"
        "try:\n    main()\nexcept SystemExit:\n    pass\n"
        f"print(sorted(m for m in {HEAVY!r} if m in sys.modules))"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    )
    assert result.stdout.strip().splitlines()[-1] == "[]"


class Tty(io.StringIO):
    def isatty(self) -> bool:
        return True


def progress(done: int, total: int = 10) -> Progress:
    p = Progress(total=total)
    p.done, p.passed, p.errors, p.tokens = done, done // 2, 1, 1234
    return p


def test_plain_lines_when_not_a_tty() -> None:
    err = io.StringIO()
    display = _ProgressDisplay(Output(stderr=err, stdout=io.StringIO()), quiet=False)
    display.start(progress(0))
    display.update(progress(3))  # throttled: within 5 s of the start
    display.stop(progress(10))
    lines = err.getvalue().splitlines()
    assert len(lines) == 1
    assert lines[0].startswith("progress: 10/10 attempts")
    assert "pass 50.0%" in lines[0] and "errors 1" in lines[0] and "tokens 1,234" in lines[0]


def test_quiet_prints_nothing() -> None:
    err = Tty()
    display = _ProgressDisplay(Output(stderr=err, stdout=io.StringIO()), quiet=True)
    display.start(progress(0))
    display.update(progress(5), force=True)
    display.stop(progress(10))
    assert err.getvalue() == ""


def test_rich_bar_on_a_tty(monkeypatch: object) -> None:
    err = Tty()
    display = _ProgressDisplay(Output(stderr=err, stdout=io.StringIO()), quiet=False)
    display.start(progress(0))
    display.stop(progress(10))
    text = err.getvalue()
    assert "10/10" in text and "pass 50.0%" in text
