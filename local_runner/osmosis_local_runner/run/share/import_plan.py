"""A local run directory, checked and described for the platform's import
(published-cli-0.3.8.md §5.3): every rule the platform applies is checked here first —
so nothing is sent for a run that would be refused — and the request names each file
with its size and SHA-256.

Sent: ``index.jsonl``, ``progress.json``, ``logs.txt``, each referenced
``rollout_trials/<id>/trajectory*.json`` and every regular file under
``rollout_trials/<id>/artifacts/`` (except its top-level ``manifest.json``). Not sent: our
results document, the manifest (its digest is), the projections, events.
"""

from __future__ import annotations

import json
import math
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from osmosis_client._fs import file_sha256
from osmosis_client.errors import InvalidInputError

_HEX32 = re.compile(r"[0-9a-f]{32}")
_TRAJECTORY = re.compile(r"trajectory[A-Za-z0-9._-]*\.json")
PROVENANCE = (
    "sdk_version",
    "git_head",
    "git_branch",
    "git_dirty",
    "config_branch",
    "config_commit_sha",
    "config_path",
)


@dataclass(frozen=True)
class ImportFile:
    path: str  # relative, POSIX
    local: Path
    size: int
    sha256: str
    identity: tuple[int, int, int, int, int]  # dev, inode, size, mtime_ns, ctime_ns

    def wire(self) -> dict[str, Any]:
        return {"path": self.path, "size": self.size, "sha256": self.sha256}

    def unchanged(self) -> bool:
        try:
            return _identity(self.local) == self.identity
        except OSError:
            return False


@dataclass
class ImportPlan:
    run_dir: Path
    body: dict[str, Any]
    files: list[ImportFile] = field(default_factory=list)


def _refuse(run_dir: Path, what: str) -> InvalidInputError:
    return InvalidInputError(
        f"{run_dir} cannot be uploaded: {what}",
        hint="only a finished local run can be uploaded; finish it first",
        code="VALIDATION",
        data={"run": str(run_dir)},
    )


def plan_import(
    run_dir: Path, *, replace: bool = False, config_path: str | None = None
) -> ImportPlan:
    """Check ``run_dir`` and describe its import; ``config_path`` replaces the recorded
    one (``eval run --upload`` names the config it ran)."""
    if run_dir.is_symlink() or not run_dir.is_dir():
        raise _refuse(run_dir, "not a run directory")
    manifest_bytes = _read(run_dir, "manifest.json")
    manifest = _object(run_dir, "manifest.json", manifest_bytes)
    inputs = _check_manifest(run_dir, manifest)
    progress = _object(run_dir, "progress.json", _read(run_dir, "progress.json"))
    metrics = _object(run_dir, "metrics.json", _read(run_dir, "metrics.json"))
    index = _index(run_dir)
    _check_complete(run_dir, index, progress, int(inputs["n"]))
    eval_run, summary = _check_metrics(run_dir, metrics, manifest, inputs)
    files = _files(run_dir, index)
    provenance = {k: v for k, v in (manifest.get("provenance") or {}).items() if k in PROVENANCE}
    if "git_dirty" in provenance:
        provenance["git_dirty"] = bool(provenance["git_dirty"])
    if config_path is not None:
        provenance["config_path"] = config_path
    rollout = inputs["rollout"]
    experiment_rollout = {"name": rollout["name"], "source_digest": rollout["source_digest"]}
    for key, given in (("branch", "config_branch"), ("commit_sha", "config_commit_sha")):
        if provenance.get(given):
            experiment_rollout[key] = provenance[given]
    import hashlib

    body = {
        "schema_version": 1,
        "local_run_id": manifest["local_run_id"],
        "manifest_digest": hashlib.sha256(manifest_bytes).hexdigest(),
        "run": {
            "name": manifest["run_name"],
            "started_at": eval_run["started_at"],
            "completed_at": eval_run["completed_at"],
            "experiment_config": {
                "rollout": experiment_rollout,
                "entrypoint": rollout["entrypoint"],
                "model_path": inputs["model_path"],
                "dataset": {
                    "name": eval_run["dataset_name"],
                    "sha256": inputs["dataset"]["sha256"],
                    "selected_source_rows": inputs["dataset"]["selected_source_rows"],
                },
            },
            "evaluation_config": {"n": inputs["n"], "pass_threshold": summary["pass_threshold"]},
        },
        "schema_versions": inputs["versions"],
        "provenance": provenance,
        "files": [f.wire() for f in files],
        "reimport": replace,
    }
    return ImportPlan(run_dir, body, files)


def _read(run_dir: Path, name: str) -> bytes:
    path = run_dir / name
    if path.is_symlink() or not path.is_file():
        raise _refuse(run_dir, f"{name} is missing")
    return path.read_bytes()


def _object(run_dir: Path, name: str, raw: bytes) -> dict[str, Any]:
    try:
        value = json.loads(raw)
    except ValueError as exc:
        raise _refuse(run_dir, f"{name} is not JSON") from exc
    if not isinstance(value, dict):
        raise _refuse(run_dir, f"{name} is not a JSON object")
    return value


def _text(value: Any) -> bool:
    return isinstance(value, str) and bool(value)


def _count(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def _check_manifest(run_dir: Path, manifest: dict[str, Any]) -> dict[str, Any]:
    inputs = manifest.get("inputs")
    if manifest.get("schema_version") != 1 or not isinstance(inputs, dict):
        raise _refuse(run_dir, "manifest.json is not schema version 1")
    if not _HEX32.fullmatch(str(manifest.get("local_run_id", ""))):
        raise _refuse(run_dir, "manifest.json has no valid local_run_id")
    if manifest.get("run_name") != run_dir.name:
        raise _refuse(run_dir, "manifest.json names another run")
    rollout, dataset = inputs.get("rollout") or {}, inputs.get("dataset") or {}
    needed = {
        "model_path": inputs.get("model_path"),
        "rollout.name": rollout.get("name"),
        "rollout.entrypoint": rollout.get("entrypoint"),
        "rollout.source_digest": rollout.get("source_digest"),
        "dataset.sha256": dataset.get("sha256"),
        "dataset.selected_source_rows": dataset.get("selected_source_rows"),
    }
    missing = [k for k, v in needed.items() if not _text(v)]
    if missing:
        raise _refuse(run_dir, f"manifest.json inputs lack {', '.join(missing)}")
    n: Any = inputs.get("n")
    if not (_count(n) and n >= 1) or not isinstance(inputs.get("versions"), dict):
        raise _refuse(run_dir, "manifest.json inputs.n or inputs.versions is wrong")
    return inputs


def _index(run_dir: Path) -> list[dict[str, Any]]:
    path = run_dir / "index.jsonl"
    if path.is_symlink() or not path.is_file():
        raise _refuse(run_dir, "index.jsonl is missing")
    rows, pairs, ids = [], set(), set()
    for number, line in enumerate(path.read_text(encoding="utf-8").split("\n"), 1):
        if not line:
            continue
        try:
            row = json.loads(line)
        except ValueError as exc:
            raise _refuse(run_dir, f"index.jsonl line {number} is not JSON") from exc
        pair = (row.get("row_index"), row.get("run_index")) if isinstance(row, dict) else None
        if (
            pair is None
            or not all(_count(v) for v in pair)
            or pair in pairs
            or not _HEX32.fullmatch(str(row.get("rollout_id", "")))
            or row["rollout_id"] in ids
            or row.get("status") not in ("success", "failed", "skipped")
            or not (
                row.get("trajectory_filename") is None
                or _TRAJECTORY.fullmatch(str(row["trajectory_filename"]))
            )
        ):
            raise _refuse(run_dir, f"index.jsonl line {number} is not a valid result row")
        pairs.add(pair)
        ids.add(row["rollout_id"])
        rows.append(row)
    return rows


def _check_complete(
    run_dir: Path, index: list[dict[str, Any]], progress: dict[str, Any], n: int
) -> None:
    if not all(
        _count(progress.get(k)) for k in ("total_runs", "sampled_rows", "total_dataset_rows")
    ):
        raise _refuse(run_dir, "progress.json is not valid")
    total, sampled = int(progress["total_runs"]), int(progress["sampled_rows"])
    if len(index) != total:
        raise _refuse(
            run_dir,
            f"local evaluation is incomplete: index.jsonl has {len(index)} terminal results "
            f"but progress.json expects {total}",
        )
    expected = {(r, k) for r in range(sampled) for k in range(n)}
    if total != sampled * n or {(r["row_index"], r["run_index"]) for r in index} != expected:
        raise _refuse(run_dir, "index.jsonl does not cover every row and run of the selection")


def _check_metrics(
    run_dir: Path, metrics: dict[str, Any], manifest: dict[str, Any], inputs: dict[str, Any]
) -> tuple[dict[str, Any], dict[str, Any]]:
    eval_run, summary = metrics.get("eval_run") or {}, metrics.get("summary") or {}
    if (
        eval_run.get("id") != manifest["local_run_id"]
        or eval_run.get("name") != manifest["run_name"]
    ):
        raise _refuse(run_dir, "metrics.json describes another run")
    if eval_run.get("status") != "finished":
        raise _refuse(run_dir, f"the run is not finished (status {eval_run.get('status')!r})")
    if not all(_text(eval_run.get(k)) for k in ("started_at", "completed_at", "dataset_name")):
        raise _refuse(run_dir, "metrics.json lacks started_at, completed_at or dataset_name")
    if eval_run.get("model_name") != inputs["model_path"]:
        raise _refuse(run_dir, "metrics.json names another model than the manifest")
    if eval_run.get("rollout_name") != inputs["rollout"]["name"]:
        raise _refuse(run_dir, "metrics.json names another rollout than the manifest")
    threshold = summary.get("pass_threshold")
    if (
        isinstance(threshold, bool)
        or not isinstance(threshold, int | float)
        or not math.isfinite(threshold)
    ):
        raise _refuse(run_dir, "metrics.json summary.pass_threshold is not a number")
    return eval_run, summary


def _files(run_dir: Path, index: list[dict[str, Any]]) -> list[ImportFile]:
    names = ["index.jsonl", "progress.json"]
    if (run_dir / "logs.txt").is_file() and not (run_dir / "logs.txt").is_symlink():
        names.append("logs.txt")
    trials = run_dir / "rollout_trials"
    if trials.is_symlink():
        raise _refuse(run_dir, "rollout_trials is a symlink")
    for row in index:
        folder = trials / row["rollout_id"]
        if folder.is_symlink():
            raise _refuse(run_dir, f"rollout_trials/{row['rollout_id']} is a symlink")
        if row.get("trajectory_filename"):
            names.append(f"rollout_trials/{row['rollout_id']}/{row['trajectory_filename']}")
        artifacts = folder / "artifacts"
        if artifacts.is_symlink():
            raise _refuse(run_dir, f"rollout_trials/{row['rollout_id']}/artifacts is a symlink")
        if artifacts.is_dir():
            for path in sorted(artifacts.rglob("*")):
                if path.is_symlink():
                    raise _refuse(run_dir, f"{path.relative_to(run_dir)} is a symlink")
                if path.is_file() and path != artifacts / "manifest.json":
                    names.append(path.relative_to(run_dir).as_posix())
    files = []
    for name in sorted(set(names)):
        local = run_dir / name
        if not local.is_file() or local.is_symlink():
            raise _refuse(run_dir, f"{name} is missing")
        if len(name) > 1024 or any(ord(c) < 32 for c in name) or "\\" in name:
            raise _refuse(run_dir, f"{name!r} cannot be named on the platform")
        files.append(
            ImportFile(name, local, local.stat().st_size, file_sha256(local), _identity(local))
        )
    return files


def _identity(path: Path) -> tuple[int, int, int, int, int]:
    st = os.stat(path)
    return st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns
