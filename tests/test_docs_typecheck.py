"""The Python examples of docs/python-api.md type-check under ``mypy --strict`` against
the installed packages (issue 43: the documented API did not — no ``py.typed``, a union
return and ``**options: Any``). Each ```python block is its own module, as a reader copies
it; third-party libraries the examples plot with need not be installed."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOC = ROOT / "docs" / "python-api.md"
#: what the examples use beside osmosis-client (not installed for the tests)
ELSEWHERE = ("matplotlib", "matplotlib.*", "pandas", "pandas.*")
PACKAGES = ("osmosis_client", "osmosis_cli", "osmosis_local_runner")

pytestmark = pytest.mark.slow


def blocks(text: str) -> list[str]:
    return re.findall(r"```python\n(.*?)```", text, flags=re.DOTALL)


def test_every_python_example_of_the_python_api_page_passes_mypy_strict(tmp_path: Path) -> None:
    found = blocks(DOC.read_text(encoding="utf-8"))
    assert len(found) >= 10  # the page's examples, not a parsing accident
    for index, code in enumerate(found):
        (tmp_path / f"example_{index:02d}.py").write_text(code)
    config = tmp_path / "mypy.ini"
    # the packages' folders (an editable install is an import hook mypy cannot follow;
    # the wheel's py.typed markers are checked in tests/e2e/test_packaging.py)
    paths = ":".join(str(ROOT / d) for d in (".", "cli", "local_runner"))
    config.write_text(
        f"[mypy]\nstrict = True\nwarn_unreachable = True\nmypy_path = {paths}\n"
        # a notebook cell's bare expression is how the page shows a value
        "disable_error_code = top-level-await\n"
        + "".join(f"[mypy-{name}]\nignore_missing_imports = True\n" for name in ELSEWHERE)
        # the packages are checked by the project's own mypy run: here their types are
        # used as an installed package's are, their own errors not reported
        + "".join(f"[mypy-{p}.*]\nfollow_imports = silent\n" for p in PACKAGES)
    )
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "mypy",
            "--config-file",
            str(config),
            "--no-incremental",
            *sorted(str(p) for p in tmp_path.glob("example_*.py")),
        ],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stdout + done.stderr
