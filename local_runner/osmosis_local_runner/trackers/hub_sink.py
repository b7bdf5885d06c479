"""The Hugging Face Hub: runs published as a dataset repository — lm-evaluation-harness's
convention of details and results: one config per eval (a config's name, or a suite
entry's), a split per run (its name, ``-`` as ``_``) plus ``latest``; ``details`` one
row per attempt, ``results`` a row per summary metric (parquet, one schema for every run
so splits load together); a dataset card naming the model, endpoint kind, config,
dataset digest, git commit and date, with a metrics table. Private unless made public.

Every push adds to what the repository holds: ``osmosis_index.json`` in it lists the
runs pushed so far (from any machine), and the card is written again from it. One commit
a push; then every file is checked against the repository's listing (sizes) — a file
missing or short is an error, and the push can simply be made again."""

from __future__ import annotations

import io
import json
import re
from typing import Any

from osmosis_client.errors import InvalidInputError
from osmosis_local_runner.trackers.destinations import Destination
from osmosis_local_runner.trackers.payload import Payload

INDEX = "osmosis_index.json"


def split_of(name: str) -> str:
    """A run's split name (the Hub's ``\\w+``): ``step-100`` → ``step_100``."""
    return re.sub(r"\W", "_", name)


def send(payload: Payload, destination: Destination, step: int | None) -> dict[str, Any]:
    from osmosis_local_runner.trackers.hub_repo import hub_api, hub_failure

    api = hub_api()  # the token checked before anything is sent
    repo = str(destination.target)
    try:
        return _send(api, repo, payload, destination, step)
    except Exception as exc:
        raise hub_failure(exc, repo, api.endpoint) from exc


def _send(
    api: Any, repo: str, payload: Payload, destination: Destination, step: int | None
) -> dict[str, Any]:
    from huggingface_hub import CommitOperationAdd

    from osmosis_local_runner.trackers.hub_repo import ready_repo

    ready_repo(api, repo, "dataset", public=destination.public)
    index = _index(api, repo)
    config, split = payload.group, split_of(payload.name)
    _check_split(index.get(config, {}), split, payload.name, repo)
    index.setdefault(config, {})[split] = {
        "run": payload.name,
        "date": payload.params.get("created_at", ""),
        "step": step,
        "params": payload.params,
        "metrics": payload.metrics,
    }
    files = {
        f"{config}/details_{split}.parquet": _parquet(payload),
        f"results/{config}_{split}.parquet": _results(payload, step),
        INDEX: (json.dumps(index, indent=1, sort_keys=True) + "\n").encode(),
        "README.md": card(repo, index).encode(),
    }
    commit = api.create_commit(
        repo,
        repo_type="dataset",
        commit_message=f"osmosis eval push: {payload.name}",
        operations=[CommitOperationAdd(path, io.BytesIO(data)) for path, data in files.items()],
    )
    verify_uploaded(api, repo, {path: len(data) for path, data in files.items()})
    return {"run_id": commit.oid, "into": "own", "url": f"{api.endpoint}/datasets/{repo}"}


def _check_split(runs: dict[str, Any], split: str, name: str, repo: str) -> None:
    """Two runs whose names differ only by punctuation (``step-1``, ``step_1``) would share
    a split: the second would silently replace the first — refused instead."""
    there = runs.get(split)
    if there is not None and there.get("run") not in (None, name):
        raise InvalidInputError(
            f"run {name!r} would replace run {there['run']!r} in {repo}: both are the split "
            f"{split!r} (a split name keeps letters, digits and '_' only)",
            hint="rename one of the runs, or push it to another repository",
            code="HUB_SPLIT_TAKEN",
        )


def _index(api: Any, repo: str) -> dict[str, Any]:
    """The runs the repository holds already (empty when new)."""
    from huggingface_hub import hf_hub_download
    from huggingface_hub.errors import EntryNotFoundError, RemoteEntryNotFoundError

    if INDEX not in api.list_repo_files(repo, repo_type="dataset"):
        return {}
    try:
        path = hf_hub_download(repo, INDEX, repo_type="dataset", endpoint=api.endpoint)
    except (EntryNotFoundError, RemoteEntryNotFoundError):
        return {}
    try:
        with open(path, encoding="utf-8") as handle:
            found = json.load(handle)
    except ValueError:  # broken by someone's edit: this push's run starts it again
        return {}
    if not isinstance(found, dict):
        return {}
    # only what this module writes: config → split → one run's facts, each in its shape
    return {
        str(config): {
            str(split): _entry(run) for split, run in runs.items() if isinstance(run, dict)
        }
        for config, runs in found.items()
        if isinstance(runs, dict)
    }


def _entry(run: dict[str, Any]) -> dict[str, Any]:
    """One run's facts as this module writes them; what is of another shape (someone's
    edit, another tool) is dropped, so it never blocks a later push."""
    from osmosis_client.llm.usage import amount_of

    def text(value: Any) -> str | None:
        return value if isinstance(value, str) else None

    params, metrics = run.get("params"), run.get("metrics")
    params = params if isinstance(params, dict) else {}
    metrics = metrics if isinstance(metrics, dict) else {}
    step = run.get("step")
    return {
        "run": text(run.get("run")),
        "date": text(run.get("date")) or "",
        "step": step if isinstance(step, int) and not isinstance(step, bool) else None,
        "params": {str(k): v for k, v in params.items() if isinstance(v, str | int | float)},
        "metrics": {
            str(k): found for k, v in metrics.items() if (found := amount_of(v)) is not None
        },
    }


def _results(payload: Payload, step: int | None) -> bytes:
    """The run's summary, long: a row per metric (one schema for every run, whatever its
    eval fns and k) with the run, model, step and settings (JSON text) beside it."""
    import pyarrow as pa

    names = sorted(payload.metrics)
    table = pa.table(
        {
            "run": pa.array([payload.name] * len(names), pa.string()),
            "model": pa.array([payload.params.get("model")] * len(names), pa.string()),
            "step": pa.array([step] * len(names), pa.int64()),
            "metric": pa.array(names, pa.string()),
            "value": pa.array([payload.metrics[n] for n in names], pa.float64()),
            "params": pa.array([json.dumps(payload.params, sort_keys=True)] * len(names)),
        }
    )
    return _written(table)


def _written(table: Any) -> bytes:
    import pyarrow.parquet as pq

    sink = io.BytesIO()
    pq.write_table(table, sink)
    return sink.getvalue()


def _parquet(payload: Payload) -> bytes:
    """Every attempt (not the trackers' capped table: the whole text of each), written
    in batches as the document streams by."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from osmosis_local_runner.results.documents.documents import ResultsFile
    from osmosis_local_runner.trackers.payload import attempt_cells

    types = {"row": pa.int64(), "attempt": pa.int64(), "score": pa.float64(), "passed": pa.bool_()}
    schema = pa.schema([(name, types.get(name, pa.string())) for name in payload.columns])
    sink = io.BytesIO()
    with pq.ParquetWriter(sink, schema) as writer:
        batch: list[list[Any]] = []
        for cells in attempt_cells(ResultsFile(payload.results)):
            batch.append(cells)
            if len(batch) == BATCH:
                writer.write_table(_batch(pa, schema, batch))
                batch = []
        writer.write_table(_batch(pa, schema, batch))
    return sink.getvalue()


#: attempts written to parquet at a time (memory is a batch's, not a run's)
BATCH = 1_000


def _batch(pa: Any, schema: Any, rows: list[list[Any]]) -> Any:
    columns = list(zip(*rows, strict=True)) if rows else [()] * len(schema)
    return pa.table(
        {f.name: pa.array(list(c), type=f.type) for f, c in zip(schema, columns, strict=True)},
        schema=schema,
    )


def card(repo: str, index: dict[str, Any]) -> str:
    """The dataset card: its configs (a split per run, ``latest`` the newest) in the
    front matter ``datasets`` reads, then what ran and a metrics table."""
    lines = ["---", "configs:"]
    for config in sorted(index):
        runs = index[config]
        latest = max(runs, key=lambda s: (str(runs[s].get("date") or ""), s))
        for name, path in (
            (config, f"{config}/details_{{}}.parquet"),
            (f"results_{config}", f"results/{config}_{{}}.parquet"),
        ):
            lines += [f"- config_name: {_yaml(name)}", "  data_files:"]
            for split in [*sorted(runs), "latest"]:
                chosen = latest if split == "latest" else split
                lines += [f"  - split: {split}", f"    path: {_yaml(path.format(chosen))}"]
    lines += [
        "---",
        "",
        f"# {repo}",
        "",
        "Evaluation runs published by `osmosis eval push`: for each eval a config of "
        "details (one row per attempt) and one of results (the run's summary), a split "
        "per run and `latest`.",
        "",
    ]
    for config in sorted(index):
        lines += [
            f"## {config}",
            "",
            "| run | date | model | endpoint | dataset | commit | metrics |",
            "|---|---|---|---|---|---|---|",
        ]
        lines += [_row(run) for _, run in sorted(index[config].items())]
        lines.append("")
    return "\n".join(lines)


def _row(run: dict[str, Any]) -> str:
    params, metrics = run.get("params") or {}, run.get("metrics") or {}
    shown = ", ".join(
        f"{k.split('/', 1)[-1]} {v:.3g}"
        for k, v in sorted(metrics.items())
        if k.endswith(("/mean", "/pass_at_1"))
    )
    cells = [
        run.get("run"),
        run.get("date"),
        params.get("model"),
        params.get("rollout_mode"),
        (params.get("dataset_sha256") or "")[:12],
        (params.get("git_head") or "")[:12],
        shown,
    ]
    return "| " + " | ".join(_cell(c) for c in cells) + " |"


def _yaml(text: str) -> str:
    return json.dumps(text)  # a JSON string is a YAML string


def _cell(value: Any) -> str:
    return str(value or "").replace("|", "\\|").replace("\n", " ")


def verify_uploaded(api: Any, repo: str, sizes: dict[str, int], repo_type: str = "dataset") -> None:
    """Every file sent is in the repository at its size (else: push again)."""
    listed = {
        entry.path: entry.size
        for entry in api.list_repo_tree(repo, repo_type=repo_type, recursive=True)
        if hasattr(entry, "size")
    }
    wrong = [path for path, size in sizes.items() if listed.get(path) != size]
    if wrong:
        raise RuntimeError(f"the Hub does not hold {', '.join(wrong)} as sent: push it again")
