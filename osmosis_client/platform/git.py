"""The local git repository: HEAD, dirtiness, whether HEAD is pushed, the origin's repo path.

Uses gitpython (imported lazily). Never fetches, never runs the user's code.
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from osmosis_client.errors import InvalidInputError

_SCP_LIKE = re.compile(r"^(?:[^@/\s]+@)?(?P<host>[^:/\s]+):(?!//)(?P<path>.+)$")


def repo_path_from_url(url: str) -> str | None:
    """``owner/repo`` (or ``group/sub/repo``) from a remote URL, lower-cased.

    Accepts https, ssh (``ssh://git@host:22/owner/repo.git``) and scp-style
    (``git@host:owner/repo.git``); credentials, port and ``.git`` are stripped.
    """
    url = url.strip()
    if not url:
        return None
    if "://" in url:
        parts = urlsplit(url)
        if parts.scheme == "file":
            return None
        path = parts.path
    else:
        match = _SCP_LIKE.match(url)
        if not match:
            return None
        path = match.group("path")
    path = path.strip("/")
    if path.endswith(".git"):
        path = path[:-4]
    path = path.strip("/")
    if "/" not in path:
        return None
    return path.lower()


@dataclass(frozen=True)
class RepoState:
    """What submit needs to know about the working copy."""

    root: Path
    head_sha: str
    branch: str | None  # None when HEAD is detached (the normal CI checkout)
    dirty_files: list[str] = field(default_factory=list)  # tracked, changed
    untracked_files: list[str] = field(default_factory=list)  # untracked, under rollouts/
    origin_url: str | None = None
    origin_repo: str | None = None

    @property
    def detached(self) -> bool:
        return self.branch is None


@contextlib.contextmanager
def _open(path: Path) -> Iterator[Any]:
    """The repository holding ``path``, closed after: GitPython keeps ``git cat-file``
    children (and their pipes) per repository object until it is closed — a training
    loop evaluating every checkpoint would pile them up (issue 43)."""
    try:
        import git
    except ImportError as exc:  # pragma: no cover - git binary missing
        raise InvalidInputError(
            f"git is not available ({exc})", hint="install git to submit eval runs"
        ) from exc
    try:
        repo = git.Repo(path, search_parent_directories=True)
    except (git.InvalidGitRepositoryError, git.NoSuchPathError) as exc:
        raise InvalidInputError(
            f"{path} is not inside a git repository",
            hint="submit from a clone of the repository synced to the platform",
            code="NOT_A_REPO",
        ) from exc
    try:
        yield repo
    finally:
        repo.close()


def inspect_repo(path: Path) -> RepoState:
    """HEAD, branch, changed tracked files, untracked files under rollouts/, origin."""
    with _open(path if path.is_dir() else path.parent) as repo:
        return _state(repo, path)


def _state(repo: Any, path: Path) -> RepoState:
    root = Path(repo.working_tree_dir or path)
    try:
        head = repo.head.commit.hexsha
    except ValueError as exc:
        raise InvalidInputError(
            "the repository has no commits yet", hint="commit and push your rollout first"
        ) from exc
    branch = None if repo.head.is_detached else repo.active_branch.name
    dirty: list[str] = []
    untracked: list[str] = []
    status = repo.git.status("--porcelain", "--untracked-files=all")
    for line in status.splitlines():
        code, name = line[:2], line[3:]
        if code == "??":
            if name.startswith("rollouts/"):
                untracked.append(name)
        elif name:
            dirty.append(name.split(" -> ")[-1])
    origin_url = _origin_url(repo)
    return RepoState(
        root=root,
        head_sha=head,
        branch=branch,
        dirty_files=dirty,
        untracked_files=untracked,
        origin_url=origin_url,
        origin_repo=repo_path_from_url(origin_url) if origin_url else None,
    )


def _origin_url(repo: Any) -> str | None:
    try:
        return str(repo.remotes.origin.url)
    except (AttributeError, IndexError, ValueError):
        return None


def origin_repo(path: Path) -> str | None:
    """The origin's repo path for ``path``'s repository, or None (no repo, no origin)."""
    try:
        with _open(path) as repo:
            url = _origin_url(repo)
    except InvalidInputError:
        return None
    return repo_path_from_url(url) if url else None


def is_pushed(root: Path, sha: str) -> bool:
    """Whether ``sha`` is contained in any remote-tracking branch (local refs only)."""
    with _open(root) as repo:
        refs = repo.git.for_each_ref("--contains", sha, "refs/remotes", format="%(refname)")
    return any(ref and not ref.endswith("/HEAD") for ref in refs.splitlines())


def resolve_commit(root: Path, sha: str) -> str | None:
    """The full SHA of a (possibly abbreviated) commit that exists locally, else None."""
    import git

    with _open(root) as repo:
        try:
            commit = repo.commit(sha)
        except (git.BadName, ValueError, git.GitCommandError):
            return None
        return str(commit.hexsha) if commit.hexsha.startswith(sha.lower()) else None


@dataclass(frozen=True)
class Pin:
    """What a submit pins — a full commit SHA, or a branch the platform resolves — and the
    facts a caller weighs before submitting it."""

    commit_sha: str | None
    branch: str | None
    #: HEAD was pinned but no remote-tracking branch contains it (the platform cannot run it)
    unpushed: bool = False
    #: changed tracked files of the submitted rollout: the run will not include them
    dirty_files: tuple[str, ...] = ()
    #: other changes the run will not include either (tracked files elsewhere, untracked
    #: files under rollouts/ — such as a lock file a tool left): worth a warning only
    other_changes: tuple[str, ...] = ()

    @property
    def label(self) -> str:
        return self.commit_sha[:12] if self.commit_sha else f"branch {self.branch}"


def plan_pin(
    state: RepoState, *, commit_sha: str | None, branch: str | None, rollout: str | None = None
) -> Pin:
    """Apply eval-config.md's pinning rules: ``commit_sha`` (must exist locally), else
    ``branch``, else HEAD. Never fetches; the caller decides what unpushed or dirty means.
    ``rollout`` (``rollouts/NAME``): changes to its tracked files are the ones that
    matter; without it, every tracked change does."""
    prefix = rollout.rstrip("/") + "/" if rollout else ""
    dirty = tuple(f for f in state.dirty_files if f.startswith(prefix))
    others = tuple(f for f in state.dirty_files if f not in dirty) + tuple(state.untracked_files)
    if commit_sha:
        full = resolve_commit(state.root, commit_sha)
        if full is None:
            raise InvalidInputError(
                f"commit {commit_sha} does not exist in this repository",
                hint="check experiment.commit_sha, or fetch the commit first",
                code="UNKNOWN_COMMIT",
            )
        return Pin(commit_sha=full, branch=None, dirty_files=dirty, other_changes=others)
    if branch:
        return Pin(commit_sha=None, branch=branch)
    unpushed = not is_pushed(state.root, state.head_sha)
    return Pin(
        commit_sha=state.head_sha,
        branch=None,
        unpushed=unpushed,
        dirty_files=dirty,
        other_changes=others,
    )
