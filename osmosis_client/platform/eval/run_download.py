"""A hosted run's outputs, fetched (published-cli-0.3.8.md §5.1): the samples manifest,
presigned URLs in batches of 500, then each file through :func:`fetch_file` — resumable,
size- and (where the platform gives one) hash-checked, atomic — up to 8 at a time.

Every manifest path is checked before anything is written: relative POSIX, no ``..``,
``.`` or empty segment, no backslash, no duplicate, inside the run root even through a
symlink, and in an allowed place for the selected types (``metrics.json``, ``logs.txt``,
``summary.jsonl`` and ``trajectories/*``, ``artifacts/*``). A path that fails is a failed
file (never written); the reserved per-attempt ``artifacts/…/manifest.json`` index and
files of types not asked for are left out quietly (the published client counts both as
failures, so one stray entry made every download "partial"). A file already there
with the manifest's size (and hash) is skipped, so a re-run fetches only what is missing.
"""

from __future__ import annotations

import re
import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING, Any, Protocol

import httpx

from osmosis_client._fs import file_sha256
from osmosis_client.errors import InvalidInputError, OsmosisError
from osmosis_client.layout import EVALS
from osmosis_client.platform.eval.sample_models import SampleFile, SamplesManifest, SampleURL
from osmosis_client.platform.fetch import fetch_file
from osmosis_client.platform.presigned import Progress
from osmosis_client.platform.resources.eval_calls import DOWNLOAD_URL_BATCH

if TYPE_CHECKING:
    from osmosis_client.platform._client import Client
    from osmosis_client.platform.models import EvalRun

TYPES = ("metrics", "trajectories", "artifacts", "logs")
DEFAULT_TYPES = ("metrics", "trajectories")
WORKERS = 8
ROWS = re.compile(r"\d+(-\d+)?(,\d+(-\d+)?)*")
_UNSAFE = re.compile(r"[^A-Za-z0-9_-]")
_WINDOWS = {"con", "prn", "aux", "nul"} | {f"{p}{i}" for p in ("com", "lpt") for i in range(1, 10)}


class RunNotReady(InvalidInputError):
    code = "RUN_NOT_READY"


class HostedRun(Protocol):
    """What the engine reads of a run (an eval run, a benchmark run)."""

    @property
    def id(self) -> Any: ...
    @property
    def name(self) -> str | None: ...
    @property
    def status(self) -> str | None: ...


@dataclass(frozen=True)
class OutputKind:
    """One kind of run's outputs: its types, where each file goes, how URLs are asked
    for. ``EVAL_OUTPUTS`` here; benchmark runs' in ``benchmark_download``."""

    key: str  # the report's run key: eval_run, benchmark_run
    types: tuple[str, ...]
    default_types: tuple[str, ...]
    category: Callable[[str], str | None]
    urls: Callable[[Client, str, list[SampleFile]], list[SampleURL]]
    #: manifest entries that are the platform's own bookkeeping, never outputs
    reserved: re.Pattern[str] | None = None


def safe_name(name: str, run_id: str | None = None) -> str:
    """A run name as a directory name (the published rule): other characters become
    ``_``; when that changed it, or it has upper case or is reserved on Windows, the run's
    id is appended so two names never share a directory."""
    safe = _UNSAFE.sub("_", name).strip("_") or "run"
    if run_id and (safe != name or name != name.lower() or safe.lower() in _WINDOWS):
        safe = f"{safe}--{_UNSAFE.sub('_', run_id)}"
    return safe[:255]


def parse_types(value: str | None, kind: OutputKind | None = None) -> list[str]:
    """``metrics,trajectories`` (case-insensitive) → the types; ``all`` → every type."""
    kind = kind or EVAL_OUTPUTS
    given = [t.strip().lower() for t in (value or ",".join(kind.default_types)).split(",")]
    if any(not t for t in given):
        raise InvalidInputError(
            "--type must be a comma-separated list of output types.", code="VALIDATION"
        )
    if "all" in given:
        if len(given) > 1:
            raise InvalidInputError(
                "--type all cannot be combined with other output types.", code="VALIDATION"
            )
        return list(kind.types)
    unknown = [t for t in given if t not in kind.types]
    if unknown:
        raise InvalidInputError(
            f"Unknown --type value(s): {', '.join(unknown)}. "
            f"Choose from: {', '.join(kind.types)}, all.",
            code="VALIDATION",
        )
    return [t for t in kind.types if t in given]


def check_rows(value: str | None) -> str | None:
    """``3,7,10-20``: checked, sent as given."""
    if value is None:
        return None
    if not ROWS.fullmatch(value) or any(
        int(a) > int(b) for a, _, b in (p.partition("-") for p in value.split(",")) if b
    ):
        raise InvalidInputError('--rows must use syntax like "3,7,10-20".', code="VALIDATION")
    return value


def category(path: str) -> str | None:
    """The type an eval run's manifest path belongs to (None: not a place we write)."""
    if path == "metrics.json":
        return "metrics"
    if path == "logs.txt":
        return "logs"
    if path == "summary.jsonl" or path.startswith("trajectories/"):
        return "trajectories"
    if path.startswith("artifacts/"):
        return "artifacts"
    return None


#: where a hosted eval run's outputs go by default, under the workspace's top
EVAL_OUTPUT_DIR = EVALS


def default_root(top: Path, folder: Path, name: str, run_id: str) -> Path:
    """A run's default download directory, ``top/folder/<safe name>``, made of our own
    folders: a symlink planted on the way — ``.osmosis`` committed as a link to somewhere
    else, say — is refused before anything is written through it."""
    root = top / folder / safe_name(name, run_id)
    refuse_links(top, root, "downloads are", "remove the link, or download to another directory")
    return root


def refuse_links(top: Path, path: Path, what: str, hint: str) -> None:
    """Refuse to write ``path`` when a symbolic link stands between ``top`` and it:
    ``what`` (downloads, the metrics, the config) is never written through one."""
    from osmosis_client._fs import first_link_below

    link = first_link_below(top, path)
    if link is not None:
        raise InvalidInputError(
            f"{link} is a symbolic link: {what} never written through one",
            hint=hint,
            code="SYMLINK_REFUSED",
            data={"path": str(link)},
        )


def path_problem(path: str, root: Path) -> str | None:
    """Why a manifest path must not be written under ``root`` (None: it is safe)."""
    if not path or "\\" in path or path.startswith("/") or "\x00" in path:
        return "not a relative POSIX path"
    parts = path.split("/")
    if any(p in ("", ".", "..") for p in parts):
        return "has an empty, '.' or '..' segment"
    if any(ord(c) < 32 for c in path):
        return "has a control character"
    base = root.resolve()
    target = (root / PurePosixPath(path)).resolve()
    if not target.is_relative_to(base) or target == base:
        return "leaves the run directory"
    return None


@dataclass
class Planned:
    file: SampleFile
    target: Path
    category: str


def _eval_urls(client: Client, run_id: str, files: list[SampleFile]) -> list[SampleURL]:
    return client.eval_runs.download_urls(run_id, files)


EVAL_OUTPUTS = OutputKind(
    "eval_run",
    TYPES,
    DEFAULT_TYPES,
    category,
    _eval_urls,
    re.compile(r"artifacts/[^/]+/manifest\.json"),
)


@dataclass
class DownloadPlan:
    run: HostedRun
    root: Path
    types: list[str]
    rows: str | None
    manifest: SamplesManifest
    kind: OutputKind = EVAL_OUTPUTS
    pending: list[Planned] = field(default_factory=list)
    skipped: list[Planned] = field(default_factory=list)
    rejected: list[tuple[str, str]] = field(default_factory=list)  # (path, why)

    @property
    def pending_bytes(self) -> int:
        return sum(p.file.size for p in self.pending)


@dataclass
class DownloadReport:
    plan: DownloadPlan
    downloaded: list[Planned] = field(default_factory=list)
    failed: list[tuple[str, str]] = field(default_factory=list)
    bytes_downloaded: int = 0

    @property
    def status(self) -> str:
        return "partial" if self.failed else "success"

    def to_json(self) -> dict[str, Any]:
        plan = self.plan
        kept = plan.pending + plan.skipped
        breakdown: dict[str, dict[str, int]] = {}
        for item in kept:
            entry = breakdown.setdefault(item.category, {"files": 0, "bytes": 0})
            entry["files"] += 1
            entry["bytes"] += item.file.size
        document = {
            plan.kind.key: {"id": plan.run.id, "name": plan.run.name},
            "status": plan.run.status,
            "selected_types": plan.types,
            "files_downloaded": len(self.downloaded),
            "files_skipped": len(plan.skipped),
            "files_failed": [{"path": p, "error": e} for p, e in self.failed],
            "bytes_downloaded": self.bytes_downloaded,
            "total_files": len(kept) + len(plan.rejected),
            "total_bytes": sum(i.file.size for i in kept),
            "breakdown": breakdown,
            "manifest_totals": plan.manifest.totals,
            "output_path": str(plan.root),
        }
        if plan.kind is EVAL_OUTPUTS:
            document["rows"] = plan.rows
        return document


def plan_download(
    client: Client,
    run: EvalRun | str,
    root: Path,
    *,
    types: Sequence[str] = DEFAULT_TYPES,
    rows: str | None = None,
    overwrite: bool = False,
) -> DownloadPlan:
    """What a download of the run's outputs into ``root`` would fetch (nothing written).
    ``run``: the run, or its name or id."""
    if isinstance(run, str):
        run = client.eval_runs.get(run)
    if run.status == "pending":
        raise RunNotReady("Outputs are not yet available for pending evaluation runs.")
    manifest = client.eval_runs.samples_manifest(run.id, list(types), check_rows(rows))
    plan = DownloadPlan(run, Path(root), list(types), rows, manifest)
    return sort_manifest(plan, overwrite=overwrite)


def sort_manifest(plan: DownloadPlan, *, overwrite: bool = False) -> DownloadPlan:
    """Each manifest file checked and put in pending, skipped (already here, same size
    and hash) or rejected (unsafe, or not a place this kind of run's outputs go)."""
    seen: set[str] = set()
    reserved = plan.kind.reserved
    for item in plan.manifest.files:
        if reserved is not None and reserved.fullmatch(item.path):
            continue  # the platform's own index, not an output
        kind = plan.kind.category(item.path)
        problem = path_problem(item.path, plan.root)
        if problem is None and item.path in seen:
            problem = "listed twice"
        if problem is None and kind is None:
            problem = "not a place a run's outputs go"
        seen.add(item.path)
        if problem is None and kind not in plan.types:
            continue  # the platform sent more than was asked for: not ours to fetch
        if problem is not None or kind is None:
            plan.rejected.append((item.path, f"refused: {problem}"))
            continue
        planned = Planned(item, plan.root / PurePosixPath(item.path), kind)
        if not overwrite and _have(planned):
            plan.skipped.append(planned)
        else:
            plan.pending.append(planned)
    return plan


def _have(planned: Planned) -> bool:
    try:
        if planned.target.stat().st_size != planned.file.size:
            return False
    except OSError:
        return False
    return planned.file.sha256 is None or file_sha256(planned.target) == planned.file.sha256.lower()


def run_download(
    client: Client,
    plan: DownloadPlan,
    *,
    http: httpx.Client | None = None,
    on_bytes: Progress | None = None,
    workers: int = WORKERS,
    sleep: Callable[[float], None] = time.sleep,
) -> DownloadReport:
    """Fetch the plan's pending files; a file that fails is reported, the others go on.
    An error getting URLs (e.g. the login expired) stops the download — what is already
    written stays, and a re-run picks up from there."""
    report = DownloadReport(plan, failed=list(plan.rejected))
    if not plan.pending:
        return report
    lock = threading.Lock()

    def count(n: int) -> None:
        with lock:
            report.bytes_downloaded += n
            if on_bytes is not None:
                on_bytes(n)

    own = http is None
    getter = http or client.storage_http()
    try:
        for start in range(0, len(plan.pending), DOWNLOAD_URL_BATCH):
            batch = plan.pending[start : start + DOWNLOAD_URL_BATCH]
            files = [b.file for b in batch]
            urls = {u.path: u.url for u in plan.kind.urls(client, str(plan.run.id), files)}
            with ThreadPoolExecutor(max_workers=max(1, workers)) as pool:
                futures = [
                    pool.submit(_one, client, getter, plan, item, urls, count, sleep)
                    for item in batch
                ]
                outcomes = [f.result() for f in futures]
            for item, problem in zip(batch, outcomes, strict=True):
                if problem is None:
                    report.downloaded.append(item)
                else:
                    report.failed.append((item.file.path, problem))
    finally:
        if own:
            getter.close()
    return report


def _one(
    client: Client,
    http: httpx.Client,
    plan: DownloadPlan,
    item: Planned,
    urls: dict[str, str],
    count: Progress,
    sleep: Callable[[float], None],
) -> str | None:
    url = urls.get(item.file.path)
    if url is None:
        return "the platform sent no download URL for it"

    def renew() -> str:
        fresh = plan.kind.urls(client, str(plan.run.id), [item.file])
        return fresh[0].url if fresh else url

    try:
        item.target.parent.mkdir(parents=True, exist_ok=True)
        fetch_file(
            http,
            url,
            item.target,
            size=item.file.size,
            sha256=item.file.sha256,
            renew=renew,
            on_bytes=count,
            sleep=sleep,
        )
    except OsmosisError as exc:
        return exc.message
    except OSError as exc:
        return f"cannot write it: {exc.strerror or type(exc).__name__}"
    return None
