from __future__ import annotations

from pathlib import Path

import pytest

from osmosis_client.errors import InvalidInputError
from osmosis_local_runner.run.execute.discovery import load_attr, load_eval_fn, load_rollout

HEADER = "from osmosis_client.rollout import AgentWorkflow, Grader\n"


def rollout(tmp_path: Path, body: str) -> Path:
    folder = tmp_path / "rollouts" / "r"
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"main_{abs(hash(body))}.py"
    path.write_text(HEADER + body)
    return path


def test_single_subclasses_are_discovered(tmp_path: Path) -> None:
    path = rollout(
        tmp_path,
        """
class W(AgentWorkflow):
    async def run(self, ctx): return None
class G(Grader):
    def grade(self, ctx): return 1.0
""",
    )
    rollout_, grader = load_rollout(path, tmp_path)
    assert type(rollout_.workflow).__name__ == "W"
    assert "W from rollouts/r/" in rollout_.describe()
    assert grader.name == "grader" and grader.mode == "grader" and not grader.is_async


def test_module_attributes_win(tmp_path: Path) -> None:
    path = rollout(
        tmp_path,
        """
class W1(AgentWorkflow):
    async def run(self, ctx): return None
class W2(AgentWorkflow):
    async def run(self, ctx): return None
class G(Grader):
    async def grade(self, ctx): return 1.0
workflow = W2()
grader = G
""",
    )
    rollout_, grader = load_rollout(path, tmp_path)
    assert type(rollout_.workflow).__name__ == "W2"
    assert grader.is_async


@pytest.mark.parametrize(
    ("body", "fragment"),
    [
        ("class G(Grader):\n    def grade(self, ctx): return 1\n", "defines no AgentWorkflow"),
        (
            "class A(AgentWorkflow):\n    async def run(self, c): pass\n"
            "class B(AgentWorkflow):\n    async def run(self, c): pass\n"
            "class G(Grader):\n    def grade(self, c): return 1\n",
            "several AgentWorkflow subclasses (A, B)",
        ),
        (
            "class A(AgentWorkflow):\n    pass\nclass G(Grader):\n    def grade(self, c): return 1\n",
            "does not implement run()",
        ),
        ("raise RuntimeError('broken import')\n", "RuntimeError: broken import"),
        (
            "class A(AgentWorkflow):\n    def __init__(self, x): pass\n    async def run(self, c): pass\n"
            "class G(Grader):\n    def grade(self, c): return 1\n",
            "no constructor arguments",
        ),
    ],
)
def test_bad_rollouts_exit_2_naming_what_was_found(
    tmp_path: Path, body: str, fragment: str
) -> None:
    with pytest.raises(InvalidInputError) as info:
        load_rollout(rollout(tmp_path, body), tmp_path)
    assert fragment in info.value.message + (info.value.hint or "")


def test_eval_fn_modes(tmp_path: Path) -> None:
    (tmp_path / "rewards_mod.py").write_text(
        "def simple(solution_str, ground_truth, extra_info=None, **kw): return 1.0\n"
        "async def full(messages, ground_truth, metadata, **kw): return 0.5\n"
        "def bad(text, truth): return 0\n"
        "VALUE = 3\n"
    )
    simple = load_eval_fn("rewards_mod:simple", cwd=tmp_path)
    full = load_eval_fn("rewards_mod:full", cwd=tmp_path)
    assert (simple.mode, simple.is_async) == ("simple", False)
    assert (full.mode, full.is_async) == ("full", True)
    with pytest.raises(InvalidInputError, match="first parameter is 'text'"):
        load_eval_fn("rewards_mod:bad", cwd=tmp_path)
    with pytest.raises(InvalidInputError, match="not a function"):
        load_eval_fn("rewards_mod:VALUE", cwd=tmp_path)
    by_path = load_eval_fn("rewards_mod.py:simple", cwd=tmp_path)
    assert by_path.mode == "simple"


@pytest.mark.parametrize("spec", ["nocolon", "missing_module_xyz:fn", ":fn", "mod:"])
def test_bad_module_paths(tmp_path: Path, spec: str) -> None:
    with pytest.raises(InvalidInputError):
        load_attr(spec, cwd=tmp_path)


def _fn(tmp_path: Path, source: str) -> object:
    module = tmp_path / f"fns_{abs(hash(source))}.py"
    module.write_text(source)
    return load_eval_fn(f"{module}:fn", cwd=tmp_path)


ROW = {"user_prompt": "q", "ground_truth": "4", "difficulty": "easy"}


@pytest.mark.parametrize(
    ("signature", "expected"),
    [
        ("def fn(solution_str, ground_truth, extra_info=None, **kw)", ("a", "4", ROW)),
        ("def fn(solution_str, ground_truth, **kwargs)", ("a", "4", {"extra_info": ROW})),
        ("def fn(solution_str, ground_truth)", ("a", "4")),
        ("def fn(solution_str)", ("a",)),
        ("def fn(solution_str, gt, info)", ("a", "4", ROW)),
        (
            "def fn(solution_str, *, extra_info, ground_truth=None)",
            ("a", {"extra_info": ROW, "ground_truth": "4"}),
        ),
        ("def fn(solution_str, ground_truth, threshold=0.5)", ("a", "4")),
        ("def fn(solution_str, threshold=0.5, extra_info=None)", ("a", {"extra_info": ROW})),
        ("async def fn(solution_str, **kwargs)", ("a", {"ground_truth": "4", "extra_info": ROW})),
        ("def fn(messages, ground_truth, metadata, **kw)", ("a", "4", ROW)),
    ],
)
def test_eval_fns_get_only_what_they_can_take(
    tmp_path: Path, signature: str, expected: tuple[object, ...]
) -> None:
    fn = _fn(tmp_path, f"{signature}:\n    return 1.0\n")
    args, kwargs = fn.arguments("a", "4", ROW)  # type: ignore[attr-defined]
    shown = (*args, kwargs) if kwargs else args
    assert shown == expected


def test_an_eval_fn_needing_an_unknown_parameter_is_refused_before_the_run(
    tmp_path: Path,
) -> None:
    with pytest.raises(InvalidInputError) as info:
        _fn(tmp_path, "def fn(solution_str, ground_truth, extra_info, tokenizer):\n    return 1\n")
    assert "needs parameter 'tokenizer'" in info.value.message
    assert info.value.code == "BAD_EVAL_FN"


def test_an_import_error_keeps_the_whole_signature(tmp_path: Path) -> None:
    params = ", ".join(f"param_{i}: str" for i in range(12))
    (tmp_path / "long_rewards.py").write_text(
        "from osmosis_client.rewards import osmosis_reward\n"
        "@osmosis_reward\n"
        f"def scorer(solution: str, {params}) -> float:\n    return 0.0\n"
    )
    with pytest.raises(InvalidInputError) as info:
        load_eval_fn("long_rewards:scorer", cwd=tmp_path)
    assert "param_11)" in info.value.message  # the signature to its end, not cut mid-word
