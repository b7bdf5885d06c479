"""CLI start-up stays light: help and usage errors import nothing heavy."""

from __future__ import annotations

import subprocess
import sys

import pytest

HEAVY = [
    "httpx",
    "pydantic",
    "keyring",
    "rich.console",
    "aiohttp",
    "git",
    "tomlkit",
    "yaml",
    "asyncio",
    "ssl",
]


def heavy() -> list[str]:
    import typer

    major, minor = (int(x) for x in typer.__version__.split(".")[:2])
    if (major, minor) < (0, 29):
        # typer before 0.29 imports rich itself to format help: nothing we can avoid
        return [m for m in HEAVY if m != "rich.console"]
    return HEAVY


@pytest.mark.parametrize(
    "argv",
    [
        ["--help"],
        ["eval", "--help"],
        ["eval", "run", "--help"],
        ["--platform-url", "https://x.test", "eval", "--help"],
        ["eval", "seed", "--help"],
    ],
)
def test_help_imports_no_heavy_module(argv: list[str]) -> None:
    code = (
        "import sys\nfrom osmosis_cli.main import main\n"
        f"sys.argv = ['osmosis', *{argv!r}]\n"
        "try:\n    main()\nexcept SystemExit:\n    pass\n"
        f"print(sorted(m for m in {heavy()!r} if m in sys.modules))"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    )
    assert result.stdout.strip().splitlines()[-1] == "[]"
