"""Getting a workspace ready, as a plan a person or a coding agent can follow: each step
done or not, and the one command (or page) that does it. ``osmosis quickstart`` renders
it (asking only what a terminal can answer); ``--json`` prints it for an agent, with no
questions. The published ``quickstart`` is interactive only (``INTERACTIVE_REQUIRED``
under ``--json``); the steps and the platform routes are its own
(``GET/POST /api/cli/quickstart``, published-cli-0.3.8.md §2.3).

Nothing here clones, logs in or writes: it reads the credentials, the platform's view of
the workspace and the checkout at hand.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from pydantic import Field

from osmosis_client.errors import AuthError, InvalidInputError, NotFoundError, OsmosisError
from osmosis_client.platform.models import WireModel, Workspace

if TYPE_CHECKING:
    from osmosis_client.platform._client import Client

Intent = Literal["eval", "train", "benchmark", "explore"]
INTENTS: tuple[Intent, ...] = ("eval", "train", "benchmark", "explore")
#: the agent skill each intent's prompt names (the workspace template's skills)
SKILLS = {"train": "plan-training", "eval": "plan-eval", "benchmark": "submit-benchmarks"}
#: what each intent does next, once the workspace is ready
NEXT: dict[str, list[tuple[str, str]]] = {
    "eval": [
        ("osmosis eval init my-eval", "scaffold an evaluation (config, rollout, data, model)"),
        ("osmosis eval run configs/eval/my-eval.toml", "run it offline first"),
        ("osmosis eval submit configs/eval/my-eval.toml --yes", "then on the platform"),
    ],
    "train": [
        ("osmosis template apply multiply-local-openai", "a rollout and its training config"),
        ("osmosis model list", "pick a base model for the config's model_path"),
        (
            "osmosis train submit configs/training/multiply-local-openai.toml --yes",
            "submit the training run",
        ),
    ],
    "benchmark": [
        ("osmosis benchmark list", "the benchmarks you can run"),
        ("osmosis benchmark init", "a starter configs/benchmark/default.toml"),
        ("osmosis benchmark submit configs/benchmark/default.toml --yes", "submit it"),
    ],
    "explore": [
        ("osmosis eval init demo --example quickstart", "a runnable example workspace"),
        ("osmosis eval run configs/eval/quickstart.toml", "run it offline (no login needed)"),
    ],
}


class QuickstartStatus(WireModel):
    """``GET /api/cli/quickstart?organizationId=…``: the workspace's onboarding state."""

    repo: dict[str, Any] = Field(default_factory=dict)
    billing_ready: bool = False
    completed: bool = False

    @property
    def connected(self) -> bool:
        return bool(self.repo.get("connected"))

    @property
    def full_name(self) -> str | None:
        name = self.repo.get("full_name")
        return name if isinstance(name, str) and name else None


@dataclass
class Step:
    id: str
    done: bool
    what: str
    #: the command that does it (None: a page to visit, or nothing to do)
    command: str | None = None
    url: str | None = None


@dataclass
class QuickstartPlan:
    steps: list[Step]
    workspace: dict[str, str] | None = None
    repo: dict[str, Any] = field(default_factory=dict)
    workspace_directory: str | None = None
    billing_ready: bool | None = None
    previously_completed: bool | None = None
    intent: str | None = None
    next: list[dict[str, str]] = field(default_factory=list)
    agent_prompt: str | None = None
    #: choices left to a person (workspace names when several fit)
    choices: list[str] = field(default_factory=list)

    def with_intent(self, intent: Intent) -> QuickstartPlan:
        """The same plan for ``intent``: its next commands and agent prompt (nothing read
        again)."""
        from dataclasses import replace

        return _finish(replace(self, intent=intent), intent)

    @property
    def ready(self) -> bool:
        """Logged in, a workspace, its repository connected and checked out here."""
        return all(s.done for s in self.steps if s.id != "billing")

    def to_dict(self) -> dict[str, Any]:
        found = asdict(self)
        found["ready"] = self.ready
        return found


def plan_quickstart(
    client: Client | None,
    here: Path,
    *,
    workspace: str | None = None,
    intent: Intent | None = None,
    platform_url: str | None = None,
) -> QuickstartPlan:
    """Where this machine and checkout stand, step by step. ``client`` is None when no
    credentials were found (the plan then starts with logging in)."""
    steps: list[Step] = []
    plan = QuickstartPlan(steps, intent=intent)
    if client is None:
        steps.append(Step("login", False, "log in to the platform", "osmosis login"))
        return _finish(plan, intent)
    steps.append(Step("login", True, "logged in"))
    _workspace_steps(plan, client, here, workspace, platform_url)
    return _finish(plan, intent)


def _workspace_steps(
    plan: QuickstartPlan,
    client: Client,
    here: Path,
    workspace: str | None,
    platform_url: str | None,
) -> None:
    """The workspace, its repository, this checkout, billing — each step stops the plan
    where it is not done (the rest depends on it)."""
    from osmosis_client.platform.git import origin_repo

    steps = plan.steps
    here_repo = origin_repo(here)
    workspaces = client.workspaces.list()
    chosen = _choose(workspaces, workspace or client.workspace, here_repo)
    if chosen is None:
        if workspace:
            raise InvalidInputError(
                f"no workspace named {workspace!r}",
                hint="your workspaces: " + (", ".join(w.name for w in workspaces) or "none"),
                code="NOT_FOUND",
            )
        plan.choices = [w.name for w in workspaces]
        command = "osmosis workspace switch NAME" if workspaces else None
        where = "" if workspaces else f" (create one at {platform_url or 'the platform'})"
        steps.append(Step("workspace", False, "choose a workspace" + where, command))
        return
    plan.workspace = {"id": str(chosen.id), "name": chosen.name}
    steps.append(Step("workspace", True, f"workspace {chosen.name}"))
    try:
        state = client.workspaces.quickstart_status(str(chosen.id))
    except NotFoundError:  # a platform without the route: what the workspace says
        state = QuickstartStatus(billing_ready=True)
    full = state.full_name or (
        chosen.connected_repo.repo_full_name if chosen.connected_repo else None
    )
    plan.repo = {"connected": state.connected or full is not None, "full_name": full}
    plan.billing_ready, plan.previously_completed = state.billing_ready, state.completed
    if not plan.repo["connected"]:
        steps.append(
            Step(
                "repository",
                False,
                f"connect a GitHub repository to {chosen.name} on the platform",
                url=platform_url,
            )
        )
        return
    steps.append(Step("repository", True, f"repository {full}"))
    _checkout(plan, here, here_repo, str(full))
    if not state.billing_ready:
        steps.append(
            Step(
                "billing",
                False,
                "set up billing to run on the platform (local runs need none)",
                url=platform_url,
            )
        )


def _choose(
    workspaces: list[Workspace], wanted: str | None, here_repo: str | None
) -> Workspace | None:
    """The one named (case-insensitively, by name or id), else the one connected to
    this checkout's origin, else the only one."""
    if wanted:
        low = wanted.lower()
        return next((w for w in workspaces if low in (w.name.lower(), str(w.id).lower())), None)
    if here_repo:
        for w in workspaces:
            if w.connected_repo and w.connected_repo.repo_full_name.lower() == here_repo.lower():
                return w
    return workspaces[0] if len(workspaces) == 1 else None


#: a GitHub repository's full name: an owner (letters, digits, single '-') and a name
GITHUB_REPO = re.compile(
    r"[A-Za-z0-9](?:[A-Za-z0-9]|-(?=[A-Za-z0-9])){0,38}/(?!\.\.?$)[A-Za-z0-9._-]{1,100}"
)


def _checkout(plan: QuickstartPlan, here: Path, here_repo: str | None, full: str) -> None:
    from osmosis_client.workspace import find_root, missing_paths

    if here_repo is None or here_repo.lower() != full.lower():
        if not GITHUB_REPO.fullmatch(full):  # the platform's data, never run as a command
            what = f"the platform names the repository {full!r}, which is not OWNER/NAME"
            plan.steps.append(Step("clone", False, what + ": check the workspace's settings"))
            return
        name = full.split("/")[-1]
        url = f"https://github.com/{full}.git"
        command = f"{shlex.join(['git', 'clone', url])} && {shlex.join(['cd', name])}"
        plan.steps.append(Step("clone", False, f"check out {full} and work from it", command))
        return
    root = find_root(here)
    plan.workspace_directory = str(root)
    plan.steps.append(Step("clone", True, f"checked out at {root}"))
    missing = missing_paths(root)
    what = "the workspace's folders and agent files" + (
        f" ({', '.join(missing)} missing)" if missing else ""
    )
    plan.steps.append(
        Step("scaffold", not missing, what, "osmosis doctor --fix" if missing else None)
    )


def _finish(plan: QuickstartPlan, intent: Intent | None) -> QuickstartPlan:
    if intent is not None:
        plan.next = [{"command": c, "what": w} for c, w in NEXT[intent]]
        plan.agent_prompt = agent_prompt(plan, intent)
    return plan


def agent_prompt(plan: QuickstartPlan, intent: Intent) -> str:
    """What to paste into a coding agent working in the checkout."""
    skill = SKILLS.get(intent)
    where = plan.workspace_directory or "this workspace"
    lines = [f"You are working in {where}, an Osmosis workspace."]
    if skill:
        lines.append(f"Use the {skill} skill.")
    todo = [s for s in plan.steps if not s.done]
    if todo:
        lines.append(
            "First finish setting it up: " + "; ".join(s.command or s.what for s in todo) + "."
        )
    lines.append("Then: " + "; ".join(f"`{c}` ({w})" for c, w in NEXT[intent]) + ".")
    lines.append(
        "Run `osmosis --json doctor` to check the workspace, and prefer `--json` "
        "for every osmosis command you run."
    )
    return " ".join(lines)


def record(client: Client, plan: QuickstartPlan) -> bool:
    """Tell the platform the quickstart was completed with this intent; a failure is
    reported by the caller as a warning, never raised (auth errors excepted)."""
    if plan.workspace is None or plan.intent is None:
        return False
    try:
        client.workspaces.record_quickstart(plan.workspace["id"], plan.intent)
    except AuthError:
        raise
    except OsmosisError:
        return False
    return True


__all__ = [
    "INTENTS",
    "Intent",
    "QuickstartPlan",
    "QuickstartStatus",
    "Step",
    "agent_prompt",
    "plan_quickstart",
    "record",
]
