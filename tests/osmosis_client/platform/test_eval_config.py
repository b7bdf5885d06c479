"""Eval config validation: every problem located, all reported at once."""

from __future__ import annotations

from pathlib import Path

import pytest

from osmosis_cli.commands.eval.local.scaffold import CONFIG
from osmosis_client._toml import locate_keys
from osmosis_client.errors import ConfigError
from osmosis_client.platform.eval.eval_config import parse_config

GOOD = """\
[experiment]
rollout = "demo"
entrypoint = "main.py"
model_path = "openai/gpt-5-mini"
dataset = "demo-set"
"""


@pytest.fixture
def root(tmp_path: Path) -> Path:
    (tmp_path / "rollouts" / "demo" / "sub").mkdir(parents=True)
    (tmp_path / "rollouts" / "demo" / "main.py").write_text("")
    (tmp_path / "rollouts" / "demo" / "sub" / "agent.py").write_text("")
    return tmp_path


def problems(text: str, root: Path) -> list[str]:
    with pytest.raises(ConfigError) as info:
        parse_config(text, path=Path("cfg.toml"), root=root)
    return [str(p) for p in info.value.problems]


def test_good_config_and_defaults(root: Path) -> None:
    config = parse_config(GOOD, path=Path("cfg.toml"), root=root)
    assert config.evaluation.n == 1
    assert config.evaluation.agent_workflow_timeout_s == 450
    assert config.entrypoint_path == root / "rollouts" / "demo" / "main.py"
    payload = config.to_submit_payload("a" * 40)
    assert payload == {
        "experiment_config": {
            "rollout": "demo",
            "entrypoint": "main.py",
            "model_path": "openai/gpt-5-mini",
            "dataset": "demo-set",
            "commit_sha": "a" * 40,
        }
    }


def test_payload_keeps_only_set_keys_and_nonempty_sections(root: Path) -> None:
    text = (
        GOOD
        + '[evaluation]\nn = 3\npass_threshold = 0.5\n[env]\nMODE = "fast"\n'
        + '[secrets]\nrequired = ["OPENAI_API_KEY"]\n[advanced]\nfoo = {bar = 1}\n'
        + "[local]\nseed = 4\n"
    )
    payload = parse_config(text, path=Path("c.toml"), root=root).to_submit_payload("b" * 40)
    assert payload["evaluation_config"] == {"n": 3, "pass_threshold": 0.5}
    assert payload["env_config"] == {"MODE": "fast"}
    assert payload["secrets"] == {"required": ["OPENAI_API_KEY"]}
    assert payload["advanced_config"] == {"foo": {"bar": 1}}
    assert "local" not in str(payload)


def test_entrypoint_in_a_subfolder_is_fine(root: Path) -> None:
    config = parse_config(GOOD.replace("main.py", "sub/agent.py"), path=Path("c.toml"), root=root)
    assert config.experiment.entrypoint == "sub/agent.py"


BROKEN = [
    # (what, replacement of GOOD or extra text, expected "LINE:COL: key: fragment")
    ("syntax", GOOD + "n = = 1\n", "6:5: invalid TOML"),
    ("unterminated string", GOOD + 'x = "abc\n', ":6:"),
    ("duplicate key", GOOD + 'dataset = "x"\n', ":6:"),
    (
        "missing experiment",
        "[evaluation]\nn = 1\n",
        "experiment: the [experiment] section is required",
    ),
    (
        "missing rollout",
        GOOD.replace('rollout = "demo"\n', ""),
        "1:1: experiment.rollout: is required",
    ),
    (
        "missing model_path",
        GOOD.replace('model_path = "openai/gpt-5-mini"\n', ""),
        "experiment.model_path: is required",
    ),
    (
        "unknown section",
        GOOD + "[evalution]\nn = 1\n",
        "6:1: evalution: unknown section (did you mean 'evaluation'?)",
    ),
    (
        "unknown key",
        GOOD + "[evaluation]\nbatchsize = 4\n",
        "7:1: evaluation.batchsize: unknown key (did you mean 'batch_size'?)",
    ),
    ("unknown experiment key", GOOD + 'model = "x"\n', "6:1: experiment.model: unknown key"),
    ("n string", GOOD + '[evaluation]\nn = "3"\n', "7:1: evaluation.n: must be an integer"),
    ("n zero", GOOD + "[evaluation]\nn = 0\n", "evaluation.n: must be >= 1"),
    ("n float", GOOD + "[evaluation]\nn = 1.5\n", "evaluation.n: must be an integer"),
    ("n bool", GOOD + "[evaluation]\nn = true\n", "evaluation.n: must be an integer"),
    ("limit negative", GOOD + "[evaluation]\nlimit = -5\n", "evaluation.limit: must be >= 1"),
    (
        "batch_size zero",
        GOOD + "[evaluation]\nbatch_size = 0\n",
        "evaluation.batch_size: must be >= 1",
    ),
    (
        "timeout zero",
        GOOD + "[evaluation]\ngrader_timeout_s = 0\n",
        "evaluation.grader_timeout_s: must be > 0",
    ),
    (
        "timeout string",
        GOOD + '[evaluation]\nagent_workflow_timeout_s = "450"\n',
        "must be a number",
    ),
    (
        "threshold nan",
        GOOD + "[evaluation]\npass_threshold = nan\n",
        "evaluation.pass_threshold: must be a finite number",
    ),
    (
        "rollout path",
        GOOD.replace('"demo"', '"../demo"', 1),
        "2:1: experiment.rollout: must be a single folder name",
    ),
    (
        "rollout slash",
        GOOD.replace('"demo"', '"a/b"', 1),
        "experiment.rollout: must be a single folder name",
    ),
    (
        "rollout missing dir",
        GOOD.replace('"demo"', '"other"', 1),
        "experiment.rollout: rollouts/other/ does not exist",
    ),
    (
        "entrypoint escape",
        GOOD.replace('"main.py"', '"../../etc.py"'),
        "3:1: experiment.entrypoint: must be a relative path",
    ),
    (
        "entrypoint absolute",
        GOOD.replace('"main.py"', '"/tmp/x.py"'),
        "experiment.entrypoint: must be a relative path",
    ),
    (
        "entrypoint missing",
        GOOD.replace('"main.py"', '"nope.py"'),
        "experiment.entrypoint: demo/nope.py does not exist",
    ),
    (
        "entrypoint not py",
        GOOD.replace('"main.py"', '"main.txt"'),
        "experiment.entrypoint: must be a .py file",
    ),
    (
        "sha and branch",
        GOOD + 'commit_sha = "abcdef1"\nbranch = "main"\n',
        "6:1: experiment.commit_sha: set commit_sha or branch, not both",
    ),
    (
        "bad sha",
        GOOD + 'commit_sha = "xyz"\n',
        "experiment.commit_sha: must be 7 to 40 hexadecimal",
    ),
    ("bad branch", GOOD + 'branch = "a..b"\n', "experiment.branch: is not a valid git branch name"),
    (
        "secret lower",
        GOOD + '[secrets]\nrequired = ["openai_key"]\n',
        "7:1: secrets.required: 'openai_key' must match",
    ),
    ("secret dup", GOOD + '[secrets]\nrequired = ["A_KEY", "A_KEY"]\n', "'A_KEY' is listed twice"),
    (
        "secret in env",
        GOOD + '[env]\nA_KEY = "x"\n[secrets]\nrequired = ["A_KEY"]\n',
        "'A_KEY' is also set in [env]",
    ),
    (
        "secrets not list",
        GOOD + '[secrets]\nrequired = "A_KEY"\n',
        "secrets.required: must be an array",
    ),
    ("env lower", GOOD + '[env]\nmode = "x"\n', "7:1: env.mode: must match"),
    (
        "env reserved",
        GOOD + '[env]\nOSMOSIS_TOKEN = "x"\n',
        "env.OSMOSIS_TOKEN: names starting with OSMOSIS_ are reserved",
    ),
    ("env not string", GOOD + "[env]\nMODE = 3\n", "env.MODE: must be a string"),
    ("section not table", 'experiment = "x"\n', "experiment: must be a table"),
    (
        "api key value",
        GOOD + '[local]\napi_key_env = "sk-abc123"\n',
        "local.api_key_env: must be the NAME",
    ),
    (
        "base url",
        GOOD + '[local]\nbase_url = "localhost:8000"\n',
        "local.base_url: must be an http(s) URL",
    ),
    ("seed negative", GOOD + "[local]\nseed = -1\n", "local.seed: must be >= 0"),
    ("empty dataset", GOOD.replace('"demo-set"', '""'), "experiment.dataset: must not be empty"),
    ("advanced nan", GOOD + "[advanced]\nx = nan\n", "advanced.x: must be a finite number"),
    ("advanced inf deep", GOOD + "[advanced.a]\nb = [inf]\n", "advanced.a.b: must be a finite"),
    ("huge integer", GOOD + "[advanced]\nx = 1" + "0" * 400 + "\n", "advanced.x: is too large"),
    (
        "placeholder",
        GOOD.replace('"demo-set"', '"<your-dataset>"'),
        "experiment.dataset: <your-dataset> is a template placeholder: set it to a dataset",
    ),
]


@pytest.mark.parametrize(("what", "text", "expected"), BROKEN, ids=[b[0] for b in BROKEN])
def test_broken_configs_are_located(root: Path, what: str, text: str, expected: str) -> None:
    found = problems(text, root)
    assert any(expected in p for p in found), found
    assert all(p.startswith("cfg.toml") for p in found)


def test_all_problems_reported_at_once(root: Path) -> None:
    text = GOOD.replace('"demo"', '"../x"', 1) + "[evaluation]\nn = 0\nbatch_size = -1\ntypo = 1\n"
    found = problems(text, root)
    keys = {p.split(": ")[1] for p in found}
    assert keys == {
        "experiment.rollout",
        "evaluation.n",
        "evaluation.batch_size",
        "evaluation.typo",
    }


def test_locate_keys_handles_quoted_and_dotted_keys() -> None:
    positions = locate_keys('[a]\n"b c" = 1\n  d.e = 2\n[x.y]\nz=3\n')
    assert positions[("a", "b c")] == (2, 1)
    assert positions[("a", "d", "e")] == (3, 3)
    assert positions[("x", "y", "z")] == (5, 1)


def test_template_is_valid_once_rollout_exists(root: Path) -> None:
    config = parse_config(CONFIG.format(name="demo"), path=Path("demo.toml"), root=root)
    assert config.experiment.rollout == "demo"


def test_local_header_values_with_line_breaks_are_config_problems(root: Path) -> None:
    text = GOOD + '\n[local]\nheaders = { "X-Team" = "rl\\nX-Evil: 1" }\nheader = ["X-A: b\\rc"]\n'
    found = problems(text, root)
    assert any("local.headers.X-Team" in p and "line break" in p for p in found), found
    assert any("local.header" in p and "not a 'Name: Value' header" in p for p in found), found
    assert all(":" in p.split(" ")[0] for p in found)  # FILE:LINE:COL
