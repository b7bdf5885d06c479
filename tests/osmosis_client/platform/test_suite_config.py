"""Suite files: expansion (cartesian sweeps, fixed + swept tables), names, precedence,
origins, and every problem at once with its position."""

from __future__ import annotations

from pathlib import Path

import pytest

from osmosis_client.errors import ConfigError
from osmosis_client.platform.eval.suite_config import load_suite, looks_like_suite


@pytest.fixture
def project(tmp_path: Path) -> Path:
    for name in ("math", "code"):
        (tmp_path / "rollouts" / name).mkdir(parents=True)
        (tmp_path / "rollouts" / name / "main.py").write_text("# rollout\n")
    (tmp_path / "configs" / "eval").mkdir(parents=True)
    return tmp_path


def suite_file(project: Path, text: str) -> Path:
    path = project / "configs" / "eval" / "s.toml"
    path.write_text(text)
    return path


HEAD = 'rollout = "math"\nentrypoint = "main.py"\ndataset = "d"\nmodel_path = "mock/echo"\n'


def test_entries_and_ablations_expand_with_stable_unique_names(project: Path) -> None:
    path = suite_file(
        project,
        HEAD
        + """limit = 10

[[eval]]
model_path = "mock/calculator"

[[eval]]
rollout = "code"
limit = 5

[[ablation]]
sampling = { top_p = 0.9 }
config = { split = "test" }

[ablation.sweep]
n = [1, 3]

[ablation.sweep.sampling]
temperature = [0.0, 0.5, 1.0]

[ablation.sweep.config]
difficulty = ["easy", "hard"]

[[ablation]]
rollout = "code"
[ablation.sweep]
model_path = ["openai/gpt-5-mini", "mock/echo"]
""",
    )
    assert looks_like_suite(path)
    suite = load_suite(path)
    names = [e.name for e in suite.entries]
    assert len(names) == 2 + 2 * 3 * 2 + 2 and len(set(names)) == len(names)
    assert names[:2] == ["math", "code"]
    assert "math-n3-t0.5-hard" in names and "code-gpt-5-mini" in names and "code-echo" in names
    first, second = suite.entries[0], suite.entries[1]
    assert first.settings["limit"] == 10 and second.settings["limit"] == 5  # entry > defaults
    assert str(first.origins["limit"]) == "defaults, line 5"
    assert str(second.origins["limit"]) == "entry, line 12"
    swept = next(e for e in suite.entries if e.name == "math-n3-t0.5-hard")
    assert swept.settings["sampling"] == {"top_p": 0.9, "temperature": 0.5}  # fixed + swept
    assert swept.settings["config"] == {"split": "test", "difficulty": "hard"}
    assert swept.sweep == {"n": 3, "sampling.temperature": 0.5, "config.difficulty": "hard"}
    assert str(swept.origins["sampling.temperature"]) == "sweep, line 22"
    assert swept.config is not None and swept.config.evaluation.n == 3
    assert swept.config.local.sampling == {"top_p": 0.9, "temperature": 0.5}
    assert suite.name == "s"


def test_duplicate_names_get_a_number(project: Path) -> None:
    suite = load_suite(suite_file(project, HEAD + "[[eval]]\n[[eval]]\n[[eval]]\nname = 'x'\n"))
    assert [e.name for e in suite.entries] == ["math", "math-2", "x"]


def test_every_problem_is_reported_with_its_position(project: Path) -> None:
    path = suite_file(
        project,
        """rollout = "math"
entrypoint = "main.py"
dataset = "d"
limt = 5

[[eval]]
model_path = "mock/echo"
n = 0

[[eval]]
rollout = "nowhere"
model_path = "m"

[[ablation]]
model_path = "m"
sampling = { temperature = 0.1 }
[ablation.sweep]
n = []
batch_size = 4
[ablation.sweep.sampling]
temperature = [0.2]

[[ablation]]
[ablation.sweep]
rollout = ["math"]
""",
    )
    with pytest.raises(ConfigError) as caught:
        load_suite(path)
    problems = [str(p) for p in caught.value.problems]
    expected = [
        ":4:1: limt: unknown key (did you mean 'limit'?)",
        ":8:1: math: n: must be >= 1",
        ":11:1: nowhere: rollout: rollouts/nowhere/ does not exist",
        ":18:1: ablation[0].sweep.n: a swept key needs at least one value",
        ":19:1: ablation[0].sweep.batch_size: a swept key needs a list of values",
        ":21:1: ablation[0].sweep.sampling.temperature: sampling.temperature is both fixed and swept",
    ]
    for want in expected:
        assert any(p.endswith(want) for p in problems), (want, problems)
    assert any("model_path: is required" in p for p in problems)  # the last ablation


def test_a_suite_sets_defaults_at_the_top_not_in_single_run_tables(project: Path) -> None:
    path = suite_file(project, '[experiment]\nrollout = "math"\n\n[[eval]]\nname = "a"\n')
    with pytest.raises(ConfigError) as caught:
        load_suite(path)
    assert any(
        "experiment: a suite sets defaults as top-level keys" in str(p)
        for p in caught.value.problems
    )


def test_suite_level_tables_and_endpoints_reach_every_entry(project: Path) -> None:
    path = suite_file(
        project,
        HEAD
        + 'suite = "nightly"\nendpoints_path = "configs/endpoints.toml"\n'
        + '\n[env]\nMODE = "eval"\n\n[secrets]\nrequired = ["HF_TOKEN"]\n\n[[eval]]\n',
    )
    suite = load_suite(path)
    (entry,) = suite.entries
    assert suite.name == "nightly" and entry.config is not None
    assert entry.config.env == {"MODE": "eval"} and entry.config.secrets.required == ["HF_TOKEN"]
    assert entry.config.local.endpoints_path == "configs/endpoints.toml"


def test_a_single_run_file_is_not_a_suite(project: Path) -> None:
    path = suite_file(project, '[experiment]\nrollout = "math"\n# [[eval]] in a comment\n')
    assert not looks_like_suite(path)
