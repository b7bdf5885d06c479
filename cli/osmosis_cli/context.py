"""What every command needs, built lazily (gh's factory): platform URL, store, client."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer

if TYPE_CHECKING:
    from osmosis_client import Client
    from osmosis_client.platform.git import RepoState
    from osmosis_client.platform.login.credentials import CredentialStore, ResolvedAuth

#: how the CLI sleeps between retries and polls (tests replace it)
SLEEP: Callable[[float], None] = time.sleep


@dataclass
class AppState:
    platform_url_option: str | None = None
    #: root ``--workspace NAME``: this invocation's workspace (beats OSMOSIS_WORKSPACE)
    workspace_option: str | None = None
    #: ``rich`` (people), ``json`` or ``plain`` — from ``--json`` / ``--plain`` anywhere
    output: str = "rich"
    verbose: int = 0  # -v: 1, -vv: 2
    #: the command line as typed (after ``osmosis``): for commands that suggest a re-run
    argv: list[str] = field(default_factory=list)
    _store: CredentialStore | None = field(default=None, repr=False)

    def platform_url(self) -> str:
        from osmosis_client.platform.settings import resolve_platform_url

        return resolve_platform_url(self.platform_url_option)

    def store(self) -> CredentialStore:
        if self._store is None:
            from osmosis_client.platform.login.credentials import CredentialStore

            self._store = CredentialStore()
        return self._store

    def resolve(self, workspace: str | None = None) -> ResolvedAuth:
        return self.store().resolve(
            self.platform_url(), workspace=workspace or self.workspace_option
        )

    def client(self, auth: ResolvedAuth | None = None, *, git_repo: str | None = None) -> Client:
        """A client for the platform, authenticated when ``auth`` is given."""
        from osmosis_client import Client

        return Client(
            base_url=self.platform_url(),
            token=auth.token if auth else None,
            workspace=auth.workspace if auth else None,
            git_repo=git_repo,
            sleep=lambda s: SLEEP(s),
        )

    def scoped_client(self, repo: RepoState | None = None) -> tuple[Client, str | None]:
        """An authenticated client scoped by the selected workspace, else by the git
        origin — ``repo``'s (a submit's repository), else the current directory's; and
        that workspace's name (None: scoped by origin)."""
        auth = self.resolve()
        git_repo = None
        if not auth.workspace:
            if repo is not None:
                git_repo = repo.origin_repo
            else:
                from osmosis_client.platform.git import origin_repo

                git_repo = origin_repo(Path.cwd())
        return self.client(auth, git_repo=git_repo), auth.workspace


def workspace_top() -> Path:
    """The top of the workspace holding the current directory (else the directory
    itself): where ``.osmosis/`` — downloads, metrics — goes."""
    from osmosis_client.errors import InvalidInputError
    from osmosis_client.workspace import find_root

    try:
        return find_root(Path.cwd())
    except InvalidInputError:
        return Path.cwd()


def result_scope(workspace: str | None) -> dict[str, Any]:
    """The published result-scope keys of a platform command's output: the workspace,
    else the repository's origin (published-cli-0.3.8-train.md §1.1)."""
    if workspace:
        return {"workspace": {"name": workspace}}
    from osmosis_client.platform.git import origin_repo

    return {"git": {"identity": origin_repo(Path.cwd())}}


def state(ctx: typer.Context) -> AppState:
    root = ctx.find_root()
    if not isinstance(root.obj, AppState):
        root.obj = AppState()
    return root.obj
