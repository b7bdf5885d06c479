"""What every submit command shares (``eval submit``, ``train submit``, ``benchmark
submit``): the options of a submit pinned to a commit and their rules, and its end — the
config's secrets resolved, the summary, the question, the send. What is pinned and sent
is the SDK's (``osmosis_client.platform.eval.submission`` and its siblings); this is how a
terminal asks for it."""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Generic, Protocol, TypeVar

from osmosis_cli.secret_values import SecretsFileOpt, for_submit, scope_label
from osmosis_cli.terminal.declare import YesOpt, flag

if TYPE_CHECKING:
    from osmosis_cli.context import AppState
    from osmosis_cli.terminal.output import Output
    from osmosis_client import Client
    from osmosis_client.platform.eval.eval_model import Experiment
    from osmosis_client.platform.eval.submission import PinRules
    from osmosis_client.platform.git import Pin, RepoState

T = TypeVar("T")


@dataclass(kw_only=True)
class Submit:
    """The options of every submit: no question asked, and a file of the ``[secrets]``
    values."""

    yes: YesOpt = False
    secrets_file: SecretsFileOpt = None


@dataclass(kw_only=True)
class PinnedSubmit(Submit):
    """The options of a submit pinned to this checkout's commit."""

    allow_dirty: bool = flag(
        "--allow-dirty", "Submit even with uncommitted rollout changes.", default=False
    )
    allow_unpushed: bool = flag(
        "--allow-unpushed", "Submit a HEAD no remote branch contains.", default=False
    )

    def rules(self) -> PinRules:
        from osmosis_client.platform.eval.submission import PinRules

        return PinRules(
            unattended=self.yes, allow_dirty=self.allow_dirty, allow_unpushed=self.allow_unpushed
        )


def refuse_unconfirmed(out: Output, yes: bool) -> None:
    """No terminal and no ``--yes``: refused before anything is read or sent (a submit
    would stop at its question; it never hangs)."""
    if not yes and not out.interactive:
        from osmosis_cli.terminal.output import ConfirmationRequired

        raise ConfirmationRequired(
            "submitting needs confirmation but stdin is not a terminal",
            hint="pass --yes to submit non-interactively",
        )


class PinnedPlan(Protocol):
    """What a pinned plan has for its submit: the repository and pin it was made from,
    its warnings, the ``[secrets]`` names it needs."""

    @property
    def repo(self) -> RepoState: ...
    @property
    def warnings(self) -> Sequence[str]: ...
    @property
    def secret_names(self) -> Sequence[str]: ...


P = TypeVar("P", bound=PinnedPlan)


@dataclass(frozen=True)
class Pinned(Generic[P]):
    """A pinned submit under way: its plan, its workspace's client, the workspace and
    where the runs go."""

    out: Output
    opts: Submit
    plan: P
    client: Client
    workspace: str | None
    where: str

    def send(
        self,
        send: Callable[[dict[str, str]], T],
        *,
        summary: Callable[[], None],
        question: str,
        operation: str,
        each_secret: bool = True,
    ) -> T | None:
        """:func:`confirm_and_send` of the plan's secret names."""
        return confirm_and_send(
            self.out,
            self.client,
            self.opts,
            names=self.plan.secret_names,
            summary=summary,
            question=question,
            operation=operation,
            send=send,
            each_secret=each_secret,
        )


@contextlib.contextmanager
def pinned_scope(
    app_state: AppState, out: Output, opts: Submit, plan_of: Callable[[], P]
) -> Iterator[Pinned[P]]:
    """A submit pinned to this checkout: refused first without a terminal or ``--yes``,
    then planned (its warnings said), then its workspace's client (closed after) — the
    workspace this checkout's repository is connected to (the SDK's ``check_scope``)."""
    from osmosis_client.platform.eval.submission import check_scope

    refuse_unconfirmed(out, opts.yes)
    plan = plan_of()
    for warning in getattr(plan, "warnings", ()):
        out.warn(warning)
    repo = plan.repo
    client, workspace = app_state.scoped_client(repo)
    with client:
        where = check_scope(client, repo.origin_repo)
        yield Pinned(out, opts, plan, client, workspace, where)


def confirm_and_send(
    out: Output,
    client: Client,
    opts: Submit,
    *,
    names: Sequence[str],
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
    found, stored = for_submit(client, out, names, opts.secrets_file)
    if before is not None:
        before(stored)
    summary()
    for name in names if each_secret else ():
        out.info(f"  secret {name}: {scope_label(found, stored, name)}")
    if not out.confirm(question, yes=opts.yes):
        out.cancelled(operation)
        return None
    return send(found.provided)


def report_submitted(
    out: Output,
    operation: str,
    *,
    resource: dict[str, Any],
    message: str,
    steps: list[dict[str, Any]],
    url: str | None,
    lines: Sequence[str],
) -> None:
    """A created run: the operation envelope (``--json``: nothing more), else the message,
    then (``--plain`` too) its ``lines`` and where to see it (``url``: opened last)."""
    if url:
        steps = [*steps, {"action": "open_url", "url": url}]
    if out.operation_result(operation, resource=resource, message=message, next_steps=steps):
        if out.json_mode:
            return
    else:
        out.print(message)
    for line in lines:
        out.print(line)
    if url:
        out.print(f"View: {url}")


__all__ = [
    "Pinned",
    "PinnedSubmit",
    "Submit",
    "confirm_and_send",
    "pinned_scope",
    "refuse_unconfirmed",
    "report_submitted",
]


def config_keys(experiment: Experiment, pin: Pin) -> dict[str, Any]:
    """The published ``resource.config`` of a source-pinned submit (eval or training)."""
    return {
        "rollout": experiment.rollout,
        "entrypoint": experiment.entrypoint,
        "model": experiment.model_path,
        "dataset": experiment.dataset,
        "branch": pin.branch,
        "commit_sha": pin.commit_sha,
    }
