"""A named run in its own directory — the published CLI's layout
(published-cli-0.3.8.md §6.2–6.3), so its tools, ``eval upload`` and people find runs
where they expect them::

    .osmosis/evals/
      .locks/NAME.lock      held while a run of NAME is prepared and runs
      NAME/
        manifest.json       what the run is (inputs, provenance, local_run_id)
        results.json        our results document (+ results.json.journal.jsonl)
        index.jsonl summary.jsonl events.jsonl progress.json metrics.json logs.txt
        rollout_trials/<rollout_id>/…   (server mode) trajectories and artifacts
        trajectories/row_R_run_K.json   copies of those trajectories, by row and run
      NAME.archive-<UTC>/   what --fresh set aside (nothing is ever deleted)

A run is *absent*, *unfinished* (a journal and no finished document: it resumes),
*finished*, or *foreign* (made by another tool: ``--fresh`` or another ``--name``).
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import re
import secrets
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Literal

from osmosis_client._fs import keep_out_of_git, open_nofollow, read_capped
from osmosis_client.errors import InvalidInputError
from osmosis_local_runner.results.documents.document import finished
from osmosis_local_runner.run.session.journal import journal_path

RESULTS = "results.json"
MANIFEST = "manifest.json"
LOCKS = ".locks"
MAX_NAME = 96
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*")
State = Literal["absent", "unfinished", "finished", "foreign"]

_ADJECTIVES = (  # noqa: SIM905 - a word list reads best as words
    "amber azure bold brave brisk calm clever cosmic crisp curious daring deft eager "
    "earnest fleet gentle glad golden hardy keen lively lucid mellow merry nimble noble "
    "patient plucky quiet rapid ready shrewd silver sleek snappy spry steady sunny swift "
    "tidy vivid wise witty zesty"
).split()
_ANIMALS = (  # noqa: SIM905
    "badger beaver bison crane dingo dolphin egret falcon ferret finch gecko heron ibis "
    "jaguar koala lemur lynx marmot mole newt ocelot orca osprey otter owl panda puffin "
    "quail raven seal shrew sloth stoat swift tapir tern toucan vole walrus wombat wren yak"
).split()


def check_name(name: str) -> str:
    """A run name: letters, digits, ``.``, ``_``, ``-``; starting with a letter or digit."""
    if len(name) > MAX_NAME or not _NAME.fullmatch(name) or name == LOCKS:
        raise InvalidInputError(
            f"{name!r} is not a run name",
            hint=f"use up to {MAX_NAME} letters, digits, '.', '_' or '-', starting with a "
            "letter or digit",
            code="USAGE",
        )
    return name


def generate_name(root: Path) -> str:
    """``adjective-animal-N``, not taken under ``root``."""
    pick = secrets.SystemRandom()
    for _ in range(1000):
        name = f"{pick.choice(_ADJECTIVES)}-{pick.choice(_ANIMALS)}-{pick.randrange(100)}"
        if not (root / name).exists():
            return name
    return f"run-{secrets.token_hex(4)}"


@dataclass
class RunDirectory:
    root: Path
    name: str

    @property
    def path(self) -> Path:
        return self.root / self.name

    @property
    def results(self) -> Path:
        return self.path / RESULTS

    @property
    def manifest_path(self) -> Path:
        return self.path / MANIFEST

    def state(self) -> State:
        if not self.path.exists():
            return "absent"
        if not self.path.is_dir():
            return "foreign"
        if self.results.exists() and finished(self.results):
            return "finished"
        if journal_path(self.results).exists():
            return "unfinished"
        return "absent" if not any(self.path.iterdir()) else "foreign"

    @contextlib.contextmanager
    def locked(self) -> Iterator[None]:
        """Hold ``.locks/NAME.lock``: one invocation prepares and runs a name at a time."""
        locks = self.root / LOCKS
        try:
            locks.mkdir(parents=True, exist_ok=True)
            keep_out_of_git(locks / "x")
            fd = open_nofollow(locks / f"{self.name}.lock", os.O_RDWR | os.O_CREAT, 0o600)
        except OSError as exc:
            raise InvalidInputError(
                f"cannot create {locks}: {exc.strerror or exc}",
                hint="check the directory runs are kept in",
                code="RESULTS_PATH",
            ) from exc
        try:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError as exc:
                raise InvalidInputError(
                    f"another `osmosis eval run` is running {self.name!r} "
                    f"(it holds {locks / self.name}.lock)",
                    hint="wait for it to finish, or pick another name",
                    code="RUN_LOCKED",
                ) from exc
            yield
        finally:
            os.close(fd)

    def held(self) -> bool:
        """Whether an invocation holds the run's lock now (it is running)."""
        try:
            fd = open_nofollow(self.root / LOCKS / f"{self.name}.lock", os.O_RDONLY)
        except OSError:
            return False
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            return True
        finally:
            os.close(fd)
        return False

    def archive(self) -> Path | None:
        """``--fresh``: set the run aside as ``NAME.archive-<UTC>[-N]`` (never deleted)."""
        if not self.path.exists():
            return None
        stamp = datetime.now(timezone.utc).strftime("%Y%m%dT%H%M%SZ")
        target = self.root / f"{self.name}.archive-{stamp}"
        suffix = 1
        while target.exists():
            suffix += 1
            target = self.root / f"{self.name}.archive-{stamp}-{suffix}"
        self.path.rename(target)
        return target

    def local_run_id(self) -> str:
        """The run's id: kept across resumes (from its manifest), new for a new run."""
        manifest = read_json(self.manifest_path)
        found = manifest.get("local_run_id") if manifest else None
        if isinstance(found, str) and re.fullmatch(r"[0-9a-f]{32}", found):
            return found
        return secrets.token_hex(16)


#: the most a small JSON file of a run (its manifest) may hold before it is not ours
MAX_JSON = 16 << 20


def read_json(path: Path) -> dict[str, Any] | None:
    """A run's small JSON file (a manifest): never through a planted link, never more
    than :data:`MAX_JSON` — None when it is not one we can read."""
    raw = read_capped(path, MAX_JSON)
    try:
        value = json.loads(raw) if raw is not None else None
    except (ValueError, RecursionError):
        return None
    return value if isinstance(value, dict) else None


def latest_unfinished(root: Path, config_path: str | None) -> RunDirectory | None:
    """The newest unfinished run under ``root`` of this config (``--resume`` alone)."""
    candidates: list[tuple[float, RunDirectory]] = []
    if not root.is_dir():
        return None
    for child in root.iterdir():
        if child.name.startswith(".") or ".archive-" in child.name:
            continue
        run = RunDirectory(root, child.name)
        if run.state() != "unfinished":
            continue
        manifest = read_json(run.manifest_path) or {}
        provenance = manifest.get("provenance") or {}
        if config_path is not None and provenance.get("config_path") not in (None, config_path):
            continue
        with contextlib.suppress(OSError):
            candidates.append((journal_path(run.results).stat().st_mtime, run))
    return max(candidates, key=lambda c: c[0])[1] if candidates else None


#: the published runner's input versions: an upload tells the platform what it reads
VERSIONS = {"rollout_protocol": "0.4", "dataset_normalization": 1, "state_schema": 1}


@dataclass(frozen=True)
class ManifestInputs:
    """What the run is: the published manifest's ``inputs`` (its resume lock)."""

    model_path: str
    dataset_sha256: str
    selected_source_rows: str
    n: int
    rollout: str
    entrypoint: str
    source_digest: str
    env: dict[str, str]
    secret_names: list[str]
    agent_timeout_sec: float | None
    grader_timeout_sec: float | None
    #: where the run stands in a training, and the served weights' identity (when known)
    series: str | None = None
    step: int | None = None
    weights: dict[str, Any] | None = None


def write_manifest(
    run: RunDirectory, local_run_id: str, inputs: ManifestInputs, provenance: dict[str, Any]
) -> dict[str, Any]:
    """``manifest.json`` (kept when it exists: a resumed run keeps its id and start)."""
    from osmosis_client._fs import atomic_write

    existing = read_json(run.manifest_path)
    document = {
        "schema_version": 1,
        "local_run_id": local_run_id,
        "run_name": run.name,
        "created_at": (existing or {}).get("created_at") or utc_now(),
        "inputs": {
            "model_path": inputs.model_path,
            "dataset": {
                "sha256": inputs.dataset_sha256,
                "selected_source_rows": inputs.selected_source_rows,
            },
            "n": inputs.n,
            "rollout": {
                "name": inputs.rollout,
                "entrypoint": inputs.entrypoint,
                "source_digest": inputs.source_digest,
            },
            "env": inputs.env,
            "secret_names": sorted(inputs.secret_names),
            "timeouts": {
                "agent_timeout_sec": inputs.agent_timeout_sec,
                "grader_timeout_sec": inputs.grader_timeout_sec,
            },
            "versions": VERSIONS,
            **{
                key: value
                for key in ("series", "step", "weights")
                if (value := getattr(inputs, key)) is not None
            },
        },
        "provenance": {k: v for k, v in provenance.items() if v is not None},
    }
    run.path.mkdir(parents=True, exist_ok=True)
    text = json.dumps(document, indent=2, ensure_ascii=False) + "\n"
    atomic_write(run.manifest_path, text.encode(), mode=0o600)
    return document


def utc_now() -> str:
    return datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
