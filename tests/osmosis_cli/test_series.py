"""A series is a recorded fact (issue 52): ``--series`` / ``--step`` (``--log-step`` is the
same), ``[local] series``, ``run_eval(series=, step=, weights=)`` — in the manifest, the
results document, ``eval list/info --local`` and ``runs_df``; and the follow-up commands
the product prints stay faithful: a rerun of some rows is never logged into a curve,
a run resumed by name keeps its model, endpoint and budget in what it prints."""

from __future__ import annotations

import json
import shlex
from pathlib import Path

from osmosis_local_runner import run_eval, runs_df
from tests.osmosis_cli.conftest import Invoke

CONFIG = "configs/eval/quickstart.toml"
RUN = ["eval", "run", CONFIG, "--model", "mock/calculator", "-q", "--limit", "2"]


def test_series_and_step_are_recorded_through_both_doors(
    quickstart_project: Path, invoke: Invoke
) -> None:
    cli = invoke(*RUN, "--name", "cli-7", "--series", "grpo", "--log-step", "7")
    assert cli.exit_code == 0, cli.stderr
    weights = {"path": "ckpt/step_7", "adapter_sha256": "ab" * 32}
    lib = run_eval(
        CONFIG,
        model="mock/calculator",
        limit=2,
        name="lib-7",
        series="grpo",
        step=7,
        weights=weights,
    )
    runs = quickstart_project / ".osmosis" / "evals"
    for name in ("cli-7", "lib-7"):
        config = json.loads((runs / name / "results.json").read_text())["config"]
        inputs = json.loads((runs / name / "manifest.json").read_text())["inputs"]
        assert (
            (config["series"], config["step"]) == ("grpo", 7) == (inputs["series"], inputs["step"])
        )
    assert json.loads(lib.path.read_text())["config"]["weights"] == weights
    info = invoke("eval", "info", "--local", "lib-7")
    assert "series:    grpo, step 7" in info.stdout and "ckpt/step_7" in info.stdout
    listed = {i["name"]: i for i in invoke("--json", "eval", "list", "--local").items()}
    assert (listed["cli-7"]["series"], listed["cli-7"]["step"]) == ("grpo", 7)
    frame = runs_df(quickstart_project, engine="pandas").set_index("name")
    assert frame.loc["cli-7", "series"] == "grpo" and frame.loc["cli-7", "step"] == 7
    # the config's [local] series, and a name that is not one
    import tomlkit

    path = quickstart_project / CONFIG
    document = tomlkit.parse(path.read_text())
    document.setdefault("local", tomlkit.table())["series"] = "from-config"
    path.write_text(tomlkit.dumps(document))
    assert invoke(*RUN, "--name", "cfg", "--step", "3").exit_code == 0
    config = json.loads((runs / "cfg" / "results.json").read_text())["config"]
    assert (config["series"], config["step"]) == ("from-config", 3)
    bad = invoke(*RUN, "--series", "a b")
    assert bad.exit_code == 2 and "is not a name" in bad.stderr


def test_a_rerun_of_some_rows_never_joins_the_curve(
    quickstart_project: Path, invoke: Invoke
) -> None:
    ran = invoke(
        "eval",
        "run",
        CONFIG,
        "--model",
        "mock/flaky-calculator",
        "--limit",
        "6",
        "--name",
        "s-600",
        "--series",
        "grpo",
        "--step",
        "600",
        "--log-to",
        "mlflow:http://127.0.0.1:9",
    )
    line = next(
        x
        for x in ran.stdout.splitlines() + ran.stderr.splitlines()
        if x.startswith("Run the rows that did not pass again:")
    )
    words = shlex.split(line.partition(": ")[2])
    assert "--rows" in " ".join(words) and "--model" in words
    for flag in ("--series", "--step", "--log-step", "--log-to", "--name"):
        assert flag not in words, words


def test_a_run_resumed_by_name_prints_commands_that_keep_its_model(
    quickstart_project: Path, invoke: Invoke
) -> None:
    prices = quickstart_project / "configs" / "prices.toml"
    stopped = invoke(
        "eval",
        "run",
        "configs/eval/thinking.toml",
        "--model",
        "mock/flaky-calculator",
        "--prices",
        str(prices),
        "--max-cost",
        "0.00001",
        "--name",
        "resumed",
    )
    assert stopped.exit_code in (1, 2), stopped.stderr
    if stopped.exit_code == 2:  # no price for the flaky mock in the example's table
        (prices).write_text(
            prices.read_text() + '\n[models."mock/flaky-calculator"]\ninput = 1\noutput = 1\n'
        )
        stopped = invoke(
            "eval",
            "run",
            "configs/eval/thinking.toml",
            "--model",
            "mock/flaky-calculator",
            "--max-cost",
            "0.00001",
            "--name",
            "resumed",
        )
        assert stopped.exit_code == 1, stopped.stderr
    resumed = invoke(
        "eval", "run", "configs/eval/thinking.toml", "--name", "resumed", "--max-cost", "1"
    )
    assert resumed.exit_code == 0, resumed.stderr
    line = next(
        x
        for x in resumed.stdout.splitlines() + resumed.stderr.splitlines()
        if x.startswith("Run the rows that did not pass again:")
    )
    words = shlex.split(line.partition(": ")[2])
    assert words[words.index("--model") + 1] == "mock/flaky-calculator"
    assert words[words.index("--max-cost") + 1] == "1"
