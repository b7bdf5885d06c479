"""`import osmosis_ai` in any interpreter with osmosis-client installed (the start-up
hook): a script, `python -m`, pytest — never at the cost of a real osmosis-ai."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.skipif(
    not any(Path(p, "osmosis_ai_compat.pth").exists() for p in sys.path if p),
    reason="the start-up hook is not installed in this interpreter (pip install osmosis-client)",
)

SCRIPT = """
import sys
assert "osmosis_client" not in sys.modules, "the hook imported the package at start-up"
from osmosis_ai import osmosis_reward, evaluate_rubric
from osmosis_ai.rollout import RolloutAgentLoop, create_app

@osmosis_reward
def numbers_match_reward(solution_str: str, ground_truth: str, extra_info: dict = None, **kw):
    return 1.0 if solution_str == ground_truth else 0.0

print(numbers_match_reward("4", "4"), RolloutAgentLoop.__module__)
"""


def run(
    cwd: Path, *args: str, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    clean = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH",)}
    return subprocess.run(
        [sys.executable, *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=60,
        env={**clean, **(env or {})},
    )


def test_a_plain_script_and_python_m_import_osmosis_ai(tmp_path: Path) -> None:
    (tmp_path / "reward_script.py").write_text(SCRIPT)
    script = run(tmp_path, "reward_script.py")
    assert script.returncode == 0, script.stderr
    assert script.stdout.split() == ["1.0", "osmosis_client.rollout.agent_loop.loop"]
    as_module = run(tmp_path, "-m", "reward_script")
    assert as_module.returncode == 0, as_module.stderr


def test_a_real_osmosis_ai_always_wins(tmp_path: Path) -> None:
    real = tmp_path / "site" / "osmosis_ai"
    real.mkdir(parents=True)
    (real / "__init__.py").write_text("REAL = True\n")
    probe = (
        "import osmosis_ai; print(osmosis_ai.REAL)\n"
        "try:\n    import osmosis_ai.rollout\nexcept ImportError:\n    print('no rollout')\n"
    )
    result = run(tmp_path, "-c", probe, env={"PYTHONPATH": str(tmp_path / "site")})
    assert result.returncode == 0, result.stderr
    assert result.stdout.split("\n")[:2] == ["True", "no rollout"]  # its own, not ours


def test_the_hook_can_be_turned_off(tmp_path: Path) -> None:
    result = run(tmp_path, "-c", "import osmosis_ai", env={"OSMOSIS_NO_OSMOSIS_AI_LAYER": "1"})
    assert result.returncode == 1 and "ModuleNotFoundError" in result.stderr
