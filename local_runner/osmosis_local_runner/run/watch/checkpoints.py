"""A training's checkpoints on disk, as they appear: found by their trainers' folder names
(``step_N`` and ``step-N`` — prime-rl's broadcasts —, ``checkpoint-N`` — transformers /
TRL —, ``global_step_N`` — verl, DeepSpeed), in step order; ready only once complete (a
marker the trainer writes last, else every file's size unchanged across two looks: a
checkpoint being written is never evaluated); and the identity of the weights each holds
(its path, the digest of its config or adapter config, its files' count and size).

The step is the number in the *folder's* name — the trainer's own naming of what it
saved, not a guess from a run's name."""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

#: a checkpoint folder: the trainers' names for one, its step captured
FOLDER = re.compile(r"(?:step[_-]|checkpoint-|global_step_?)(\d+)")
#: markers a trainer writes last (prime-rl's STABLE): present, the folder is complete
MARKERS = ("STABLE",)
#: the files whose digest names the weights (an adapter's config first)
CONFIGS = ("adapter_config.json", "config.json")


@dataclass(frozen=True)
class Checkpoint:
    """One saved checkpoint: its step and its folder."""

    step: int
    path: Path


def find_checkpoints(root: Path) -> list[Checkpoint]:
    """The checkpoint folders directly under ``root``, in step order (a link to a folder
    is not followed out of ``root``)."""
    found: dict[int, Checkpoint] = {}
    try:
        entries = list(root.iterdir())
    except OSError:
        return []
    for entry in entries:
        match = FOLDER.fullmatch(entry.name)
        if match is None or entry.is_symlink() or not entry.is_dir():
            continue
        step = int(match.group(1))
        found.setdefault(step, Checkpoint(step, entry))  # two spellings of a step: the first
    return [found[step] for step in sorted(found)]


@dataclass
class Readiness:
    """Whether a checkpoint is complete: ``marker`` (a file the trainer writes last; the
    usual ones when None), else the same files at the same sizes in two looks."""

    marker: str | None = None
    _seen: dict[int, dict[str, tuple[int, int]]] = field(default_factory=dict)

    def ready(self, checkpoint: Checkpoint) -> bool:
        markers = (self.marker,) if self.marker else MARKERS
        if any((checkpoint.path / name).is_file() for name in markers):
            return True
        if self.marker:  # the trainer's own marker was asked for: nothing else will do
            return False
        files = _sizes(checkpoint.path)
        before = self._seen.get(checkpoint.step)
        self._seen[checkpoint.step] = files
        return bool(files) and before == files

    def looked_once(self, checkpoint: Checkpoint) -> bool:
        """Whether one look was taken (a second may find it complete)."""
        return checkpoint.step in self._seen


def _sizes(folder: Path) -> dict[str, tuple[int, int]]:
    """Each file under ``folder``: its size and modification time (links not followed)."""
    found: dict[str, tuple[int, int]] = {}
    for path in sorted(folder.rglob("*")):
        if path.is_file() and not path.is_symlink():
            stat = path.stat()
            found[str(path.relative_to(folder))] = (stat.st_size, stat.st_mtime_ns)
    return found


def identity(checkpoint: Checkpoint) -> dict[str, Any]:
    """The weights a checkpoint holds, as a run records them: its folder, its step, the
    sha256 of its (adapter) config, how many files and bytes."""
    files = _sizes(checkpoint.path)
    found: dict[str, Any] = {
        "path": str(checkpoint.path),
        "checkpoint_step": checkpoint.step,
        "files": len(files),
        "bytes": sum(size for size, _ in files.values()),
    }
    for name in CONFIGS:
        config = checkpoint.path / name
        if config.is_file() and not config.is_symlink():
            found[f"{name.removesuffix('.json')}_sha256"] = hashlib.sha256(
                config.read_bytes()
            ).hexdigest()
            break
    return found


__all__ = ["Checkpoint", "Readiness", "find_checkpoints", "identity"]
