"""``osmosis eval rubric``, ``osmosis eval-rubric`` and ``osmosis preview``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from osmosis_cli.terminal.declare import Command, option
from osmosis_cli.terminal.errors import EXIT_FAILED, current_output, handle_errors

if TYPE_CHECKING:
    from osmosis_cli.terminal.output import Output
    from osmosis_local_runner.api.doors import RubricProgress, RubricRecord


DataOpt = Annotated[Path, option("-d --data FILE", "JSONL dataset (solution_str per line).")]
NumberOpt = Annotated[int, option("-n --number N", "Judge requests per record.", min=1)]
OutputOpt = Annotated[
    Path | None,
    option("-o --output PATH", "Result file or directory (default: .osmosis/rubrics/)."),
]
BaselineOpt = Annotated[
    Path | None,
    option(
        "-b --baseline FILE", "A prior result JSON: report the differences from its statistics."
    ),
]
ConcurrencyOpt = Annotated[int, option("--concurrency N", "Judge calls in flight.", min=1)]


def register(app: typer.Typer) -> None:
    """The published 0.2 commands: ``osmosis eval-rubric`` and ``osmosis preview``."""
    app.command("eval-rubric", cls=Command)(eval_rubric_config)
    app.command("preview", cls=Command)(preview)


def register_eval(app: typer.Typer) -> None:
    """``osmosis eval rubric`` (registered on the ``eval`` group)."""
    app.command("rubric", cls=Command)(eval_rubric)


@handle_errors
def eval_rubric(
    ctx: typer.Context,
    data: DataOpt,
    rubric: Annotated[str, option("-r --rubric TEXT|@FILE", "Rubric text, or @FILE.")],
    model: Annotated[str, option("--model PROVIDER/MODEL", "The judge model.")],
    base_url: Annotated[str | None, option("--base-url URL", "OpenAI-compatible endpoint.")] = None,
    api_key_env: Annotated[
        str | None, option("--api-key-env NAME", "NAME of the key variable.")
    ] = None,
    n: NumberOpt = 1,
    output: OutputOpt = None,
    score_min: Annotated[float, option("--score-min X")] = 0.0,
    score_max: Annotated[float, option("--score-max X")] = 1.0,
    timeout: Annotated[
        float, option("--timeout SECONDS", "Seconds per judge call.", min=0.1)
    ] = 60.0,
    concurrency: ConcurrencyOpt = 8,
    baseline: BaselineOpt = None,
) -> None:
    """Score every solution in a JSONL file with a judge model and a rubric."""
    from osmosis_client.errors import InvalidInputError
    from osmosis_client.llm.providers import split_model_path
    from osmosis_local_runner.api.doors import load_records

    out = current_output()
    text = _rubric_text(rubric)
    provider, name = split_model_path(model)
    if provider is None and base_url is None:
        raise InvalidInputError(
            f"--model {model!r} needs a provider prefix (e.g. openai/gpt-5-mini) or --base-url"
        )
    info: dict[str, Any] = {
        "provider": provider,
        "model": name,
        "timeout": timeout,
        "score_min": score_min,
        "score_max": score_max,
    }
    optional = {"base_url": base_url, "api_key_env": api_key_env}
    info.update({key: value for key, value in optional.items() if value})
    records, _ = load_records(data)
    _execute(
        out,
        records,
        text,
        info,
        n=n,
        concurrency=concurrency,
        output=output,
        baseline=baseline,
    )


@handle_errors
def eval_rubric_config(
    ctx: typer.Context,
    rubric_id: Annotated[str, option("-r --rubric ID", "Rubric id in the config.")],
    data: DataOpt,
    config: Annotated[Path | None, option("-c --config FILE", "rubric_configs.yaml|toml")] = None,
    n: NumberOpt = 1,
    output: OutputOpt = None,
    concurrency: ConcurrencyOpt = 8,
    baseline: BaselineOpt = None,
) -> None:
    """Evaluate a JSONL dataset against a rubric from a config file."""
    from osmosis_client.rewards.rubric_config import find_rubric_config, load_rubric_config
    from osmosis_local_runner.api.doors import load_records

    out = current_output()
    config_path = config or find_rubric_config(data)
    entry = load_rubric_config(config_path).get(rubric_id)
    records, skipped = load_records(data, rubric_id)
    out.info(
        f"Loaded {len(records)} record(s) for rubric {rubric_id}"
        + (f" ({skipped} for other rubrics skipped)" if skipped else "")
    )
    _execute(
        out,
        records,
        entry.rubric,
        entry.judge_info(),
        n=n,
        concurrency=concurrency,
        output=output,
        rubric_id=rubric_id,
        baseline=baseline,
    )


def _rubric_text(value: str) -> str:
    from osmosis_client.errors import InvalidInputError

    if value.startswith("@"):
        path = Path(value[1:])
        try:
            value = path.read_text(encoding="utf-8")
        except OSError as exc:
            raise InvalidInputError(f"cannot read rubric file {path}: {exc.strerror}") from exc
    if not value.strip():
        raise InvalidInputError("the rubric is empty")
    return value


def _execute(
    out: Output,
    records: list[RubricRecord],
    rubric: str,
    model_info: dict[str, Any],
    *,
    n: int,
    concurrency: int,
    output: Path | None,
    baseline: Path | None,
    rubric_id: str | None = None,
) -> None:
    import asyncio

    from osmosis_cli.terminal.progress import ProgressDisplay
    from osmosis_local_runner.api import doors as run

    prior = run.load_rubric_baseline(baseline) if baseline is not None else None
    path = run.resolve_output(output, rubric_id)
    display = ProgressDisplay(out, label="judgements")

    def on_progress(p: RubricProgress) -> None:
        display.update(p.done, p.total, f"{p.errors} errors")

    display.start(len(records) * n)
    document, failure = asyncio.run(
        run.run_rubric_eval(
            records, rubric, model_info, n=n, concurrency=concurrency, on_progress=on_progress
        )
    )
    done = sum(len(r["runs"]) for r in document["records"])
    errors = sum(1 for r in document["records"] for run in r["runs"] if run["error"])
    display.stop(done, len(records) * n, f"{errors} errors")
    if prior is not None and baseline is not None:
        document["baseline"] = run.compare_to_baseline(document["stats"], prior, baseline)
    run.write_result(path, document)
    if not out.operation_result(
        "eval.rubric",
        status="partial" if failure is not None else "success",
        resource={**document, "output_path": str(path)},
        message=f"Results written to {path}",
    ):
        _print_judgements(out, document)
    out.info(f"Results written to {path}")
    if failure is not None:
        out.error(failure)
        raise typer.Exit(EXIT_FAILED)


def _print_judgements(out: Output, document: dict[str, Any]) -> None:
    from osmosis_client._redact import safe_text

    for record in document["records"]:
        label = record["conversation_id"] or f"line {record['line']}"
        for i, run in enumerate(record["runs"], 1):
            verdict = f"{run['score']:.3f}" if run["error"] is None else f"error: {run['error']}"
            explanation = f" — {run['explanation']}" if run["explanation"] else ""
            out.print(safe_text(f"{label} [run {i}] {verdict}{explanation}"))
    stats = document["stats"]
    if stats["count"]:
        out.print(
            f"average {stats['average']:.3f}  variance {stats['variance']:.4f}  "
            f"std {stats['std']:.3f}  min {stats['min']:.3f}  max {stats['max']:.3f}  "
            f"({stats['count']} runs)"
        )
    if "baseline" in document:
        _print_baseline(out, stats, document["baseline"])


def _print_baseline(out: Output, stats: dict[str, Any], baseline: dict[str, Any]) -> None:
    out.print(f"vs baseline {baseline['path']}:")
    for key, before in baseline["stats"].items():
        delta = baseline["delta"].get(key)
        now = "n/a" if delta is None else f"{stats[key]:.3f}"
        change = "" if delta is None else f"  ({delta:+.3f})"
        out.print(f"  {key:<8} {before:.3f} -> {now}{change}")


@handle_errors
def preview(
    ctx: typer.Context,
    path: Annotated[Path, option("-p --path FILE", "A rubric config or a JSONL dataset.")],
) -> None:
    """Validate and pretty-print a rubric config or a JSONL dataset."""
    from osmosis_client.errors import InvalidInputError

    out = current_output()
    suffix = path.suffix.lower()
    if suffix in (".yaml", ".yml", ".toml"):
        from osmosis_client.rewards.rubric_config import load_rubric_config

        config = load_rubric_config(path)
        if out.detail_result({"kind": "rubric_config", **config.model_dump(mode="json")}):
            return
        out.info(f"Loaded {len(config.rubrics)} rubric(s) from {path}")
        out.print(json.dumps(config.model_dump(mode="json"), indent=2, ensure_ascii=False))
    elif suffix == ".jsonl":
        from osmosis_local_runner.api.doors import load_records

        empty: list[int] = []
        records, _ = load_records(path, on_empty_solution=empty.append)
        if empty:  # shown as they are; eval-rubric would refuse them
            lines = ", ".join(str(n) for n in empty[:10]) + (" …" if len(empty) > 10 else "")
            out.warn(
                f"{len(empty)} record(s) have an empty solution_str (line {lines}); "
                "`osmosis eval-rubric` needs one to score"
            )
        items = [record.__dict__ for record in records]
        if out.list_result(items, rows=[[json.dumps(i, ensure_ascii=False)] for i in items]):
            return
        out.info(f"Loaded {len(records)} record(s) from {path}")
        for record in records:
            out.print(json.dumps(record.__dict__, ensure_ascii=False))
    else:
        raise InvalidInputError(
            f"cannot preview {path}",
            hint="pass a .yaml/.yml/.toml rubric config or a .jsonl dataset",
        )
