"""What every submit command shares (``eval submit``, ``train submit``, ``benchmark
submit``): the options of a submit pinned to a commit and their rules, and its end — the
config's secrets resolved, the summary, the question, the send. What is pinned and sent
is the SDK's (``osmosis_client.platform.submission`` and its siblings); this is how a
terminal asks for it."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Annotated, TypeVar

import typer

from osmosis_cli.secret_values import SecretsFileOpt, for_submit, scope_label
from osmosis_cli.terminal.declare import YesOpt

if TYPE_CHECKING:
    from osmosis_cli.terminal.output import Output
    from osmosis_client import Client
    from osmosis_client.platform.submission import PinRules

T = TypeVar("T")


@dataclass(kw_only=True)
class PinnedSubmit:
    """The options of a submit pinned to this checkout's commit."""

    yes: YesOpt = False
    allow_dirty: Annotated[
        bool, typer.Option("--allow-dirty", help="Submit even with uncommitted rollout changes.")
    ] = False
    allow_unpushed: Annotated[
        bool, typer.Option("--allow-unpushed", help="Submit a HEAD no remote branch contains.")
    ] = False
    secrets_file: SecretsFileOpt = None

    def rules(self) -> PinRules:
        from osmosis_client.platform.submission import PinRules

        return PinRules(
            unattended=self.yes, allow_dirty=self.allow_dirty, allow_unpushed=self.allow_unpushed
        )


def warn_all(out: Output, warnings: Sequence[str]) -> None:
    """A plan's warnings, each on its line, before anything is asked or sent."""
    for warning in warnings:
        out.warn(warning)


def confirm_and_send(
    out: Output,
    client: Client,
    *,
    names: Sequence[str],
    secrets_file: str | None,
    yes: bool,
    summary: Callable[[], None],
    question: str,
    operation: str,
    send: Callable[[dict[str, str]], T],
    before: Callable[[Mapping[str, str]], None] | None = None,
    each_secret: bool = True,
) -> T | None:
    """The end of every submit: the config's secrets resolved (refused before anything
    is sent when one is missing), the plan's summary with how each secret reaches the
    platform (``each_secret``), the question, then ``send(values)`` — None when the
    answer is no. ``before(stored)``: a last check that needs the stored scopes."""
    found, stored = for_submit(client, out, names, secrets_file)
    if before is not None:
        before(stored)
    summary()
    for name in names if each_secret else ():
        out.info(f"  secret {name}: {scope_label(found, stored, name)}")
    if not out.confirm(question, yes=yes):
        out.cancelled(operation)
        return None
    return send(found.provided)


__all__ = ["PinnedSubmit", "confirm_and_send", "warn_all"]
