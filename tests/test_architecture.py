"""The one-way doors between the rooms (docs/architecture.md), read from the imports.

Every import counts — at module level or inside a function — except those under
``if TYPE_CHECKING:`` (types only, never executed). A rule broken here is a design
change: change docs/architecture.md with it, or move the code.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = {
    "osmosis_client": ROOT / "osmosis_client",
    "osmosis_local_runner": ROOT / "local_runner" / "osmosis_local_runner",
    "osmosis_cli": ROOT / "cli" / "osmosis_cli",
}
MAX_MODULE_LINES = 400
MAX_FUNCTION_LINES = 60


def modules() -> dict[str, Path]:
    found = {}
    for package, base in PACKAGES.items():
        for path in sorted(base.rglob("*.py")):
            parts = [package, *path.relative_to(base).with_suffix("").parts]
            if parts[-1] == "__init__":
                parts.pop()
            found[".".join(parts)] = path
    return found


MODULES = modules()


def _type_checking(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _imports(tree: ast.AST, module: str, is_package: bool) -> Iterator[str]:
    for node in ast.iter_child_nodes(tree):
        if isinstance(node, ast.If) and _type_checking(node):
            yield from (i for n in node.orelse for i in _imports(n, module, is_package))
            continue
        if isinstance(node, ast.Import):
            yield from (alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = module.split(".")
                base = base if is_package else base[:-1]
                base = base[: len(base) - (node.level - 1)]
                name = ".".join([*base, node.module] if node.module else base)
            else:
                name = node.module or ""
            submodules = [f"{name}.{a.name}" for a in node.names if f"{name}.{a.name}" in MODULES]
            yield from submodules  # "from pkg import submodule" imports the submodule
            if len(submodules) < len(node.names):
                yield name
        else:
            yield from _imports(node, module, is_package)


def imports_of(module: str) -> set[str]:
    path = MODULES[module]
    tree = ast.parse(path.read_text(encoding="utf-8"))
    names = set(_imports(tree, module, path.name == "__init__.py"))
    ours = set()
    for name in names:
        while name and name not in MODULES:  # "pkg.module.attr" → "pkg.module"
            name = name.rpartition(".")[0]
        if name and name != module:
            ours.add(name)
    return ours


GRAPH = {module: imports_of(module) for module in MODULES}


def room(module: str) -> str:
    """``osmosis_local_runner.run.kinds.server`` → ``osmosis_local_runner.run``."""
    parts = module.split(".")
    return ".".join(parts[:2])


#: the runner's rooms a front end may import: the library (api — its doors.py names what
#: a front end drives beyond the library's calls), the results it renders, the viewer it
#: serves; never run/, server/ or trackers/
RUNNER_PUBLIC = {
    "osmosis_local_runner.api",
    "osmosis_local_runner.results",
    "osmosis_local_runner.viewer",
    "osmosis_local_runner.errors",
}
#: which rooms a room may import (besides itself); a module directly in a package (its
#: base: errors, _wire…) is a room of its own
DOORS: dict[str, set[str]] = {
    # the SDK: base modules, then llm → (nothing), platform, rewards and rollout → llm
    "osmosis_client._fs": set(),
    "osmosis_client._json": set(),
    "osmosis_client._plan": set(),
    "osmosis_client._process": set(),
    "osmosis_client._threads": set(),
    "osmosis_client._times": set(),
    "osmosis_client._redact": set(),
    "osmosis_client._retry": set(),
    "osmosis_client._serving": set(),
    # installed as a top-level start-up module: imports the layer only when asked
    "osmosis_client._startup": {"osmosis_client.rollout"},
    "osmosis_client._tls": {"osmosis_client.errors"},
    "osmosis_client.envfile": {"osmosis_client.errors"},
    "osmosis_client.secret_values": {"osmosis_client.errors", "osmosis_client.envfile"},
    "osmosis_client.workspace": {"osmosis_client.errors"},
    "osmosis_client.layout": set(),  # where .osmosis/ keeps what we write, named once
    "osmosis_client._toml": set(),
    "osmosis_client._version": set(),
    "osmosis_client._wire": {"osmosis_client._json"},
    "osmosis_client.errors": set(),
    "osmosis_client.llm": {"base"},
    "osmosis_client.platform": {"base", "osmosis_client.llm"},
    "osmosis_client.rollout": {"base", "osmosis_client.llm"},
    "osmosis_client.rewards": {"base", "osmosis_client.llm"},
    # the runner: results and server never import run
    "osmosis_local_runner.errors": {"sdk"},
    "osmosis_local_runner.results": {"sdk", "osmosis_local_runner.errors"},
    "osmosis_local_runner.server": {"sdk", "osmosis_local_runner.errors"},
    "osmosis_local_runner.run": {
        "sdk",
        "osmosis_local_runner.errors",
        "osmosis_local_runner.results",
        "osmosis_local_runner.server",
        "osmosis_local_runner.trackers",
    },
    # experiment trackers: a results document sent to MLflow / W&B / Trackio
    "osmosis_local_runner.trackers": {
        "sdk",
        "osmosis_local_runner.errors",
        "osmosis_local_runner.results",
    },
    # the runs viewer: the report's pages and the run history, served read-only
    "osmosis_local_runner.viewer": {
        "sdk",
        "osmosis_local_runner.errors",
        "osmosis_local_runner.results",
        "osmosis_local_runner.run",
        "osmosis_local_runner.api",
        "osmosis_local_runner.trackers",  # a static site published as a Space
    },
    # the public API over them all (run_eval, load_run, compare_runs)
    "osmosis_local_runner.api": {
        "sdk",
        "osmosis_local_runner.errors",
        "osmosis_local_runner.results",
        "osmosis_local_runner.server",
        "osmosis_local_runner.run",
        "osmosis_local_runner.trackers",
    },
    # the CLI: the terminal layer never imports a command
    "osmosis_cli.terminal": {"sdk"},
    "osmosis_cli.context": {"sdk"},
    "osmosis_cli.globals": {"sdk", "osmosis_cli.context"},
    # commands called without a command line (tests, gh's runF seam)
    "osmosis_cli.direct": {"osmosis_cli.context"},
    "osmosis_cli.bundled": set(),
    # how `osmosis upgrade` finds the installer and the latest release
    "osmosis_cli.upgrade": {"sdk"},
    "osmosis_cli.user_code": {"sdk", *RUNNER_PUBLIC, "osmosis_cli.terminal"},
    # the values of a config's [secrets], for every command that submits or runs one
    "osmosis_cli.secret_values": {"sdk", "osmosis_cli.terminal"},
    # what every submit command shares: pinned options, confirm and send
    "osmosis_cli.submitting": {
        "sdk",
        "osmosis_cli.terminal",
        "osmosis_cli.secret_values",
        "osmosis_cli.context",
    },
    "osmosis_cli.platform_runs": {"osmosis_cli.terminal", "osmosis_cli.context"},
    "osmosis_cli.commands": {
        "sdk",
        *RUNNER_PUBLIC,
        "osmosis_cli.terminal",
        "osmosis_cli.context",
        "osmosis_cli.user_code",
        "osmosis_cli.bundled",
        "osmosis_cli.secret_values",
        "osmosis_cli.submitting",
        "osmosis_cli.upgrade",
        "osmosis_cli.platform_runs",
    },
    "osmosis_cli.__main__": {"osmosis_cli.main"},
    "osmosis_cli.main": {
        "sdk",
        "osmosis_cli.globals",
        "osmosis_cli.terminal",
        "osmosis_cli.context",
        "osmosis_cli.commands",
    },
}
BASE = {
    m
    for m in MODULES
    if m.count(".") == 1 and m.startswith("osmosis_client.") and m.split(".")[1][0] == "_"
} | {
    "osmosis_client.errors",
    "osmosis_client",
    "osmosis_client.layout",
    "osmosis_client.workspace",
    "osmosis_client.envfile",
    "osmosis_client.secret_values",
}


def allowed(source: str, target: str) -> bool:
    if source in PACKAGES:  # a package's front door re-exports its own rooms
        return target.split(".")[0] == source
    if room(target) == room(source) or target in (
        "osmosis_client",
        "osmosis_local_runner",
        "osmosis_cli",
    ):
        return True
    doors = DOORS.get(room(source))
    assert doors is not None, f"{room(source)} is a room docs/architecture.md does not name"
    if target.split(".")[0] == "osmosis_client":
        if "sdk" in doors:
            return True
        if "base" in doors and (target in BASE):
            return True
    if "runner" in doors and target.split(".")[0] == "osmosis_local_runner":
        return True
    return room(target) in doors or target in doors


def test_packages_import_one_way() -> None:
    order = {"osmosis_client": 0, "osmosis_local_runner": 1, "osmosis_cli": 2}
    wrong = [
        f"{source} → {target}"
        for source, targets in GRAPH.items()
        for target in targets
        if order[target.split(".")[0]] > order[source.split(".")[0]]
    ]
    assert wrong == []


def test_rooms_import_only_through_their_doors() -> None:
    wrong = [
        f"{source} → {target}"
        for source, targets in sorted(GRAPH.items())
        for target in sorted(targets)
        if not allowed(source, target)
    ]
    assert wrong == []


def test_the_cli_never_reaches_into_the_runner() -> None:
    """Not even for a type: a CLI module names the runner's public rooms only."""
    import re

    inner = re.compile(r"osmosis_local_runner\.(run|server|trackers)\b")
    wrong = [
        f"{module}: {line.strip()}"
        for module, path in MODULES.items()
        if module.startswith("osmosis_cli")
        for line in path.read_text(encoding="utf-8").splitlines()
        if line.lstrip().startswith(("from ", "import ")) and inner.search(line)
    ]
    assert wrong == []


def test_command_groups_never_import_each_other() -> None:
    """``commands/eval`` and ``commands/auth`` are separate rooms: what two groups share
    lives below them (terminal, context, user_code) or in the SDK and the runner."""

    def group(module: str) -> str | None:
        parts = module.split(".")
        return parts[2] if len(parts) > 2 and parts[1] == "commands" else None

    wrong = [
        f"{source} → {target}"
        for source, targets in sorted(GRAPH.items())
        for target in sorted(targets)
        if group(source) and group(target) and group(source) != group(target)
    ]
    assert wrong == []


def _cycles() -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    counter = [0]

    def visit(node: str) -> None:
        index[node] = low[node] = counter[0]
        counter[0] += 1
        stack.append(node)
        on_stack.add(node)
        for nxt in GRAPH.get(node, ()):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = []
            while True:
                top = stack.pop()
                on_stack.discard(top)
                component.append(top)
                if top == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(GRAPH):
        if node not in index:
            visit(node)
    return found


def test_no_import_circles() -> None:
    # a package's __init__ re-exporting its modules is not a circle of design
    cycles = [c for c in _cycles() if not all(m in PACKAGES or m.count(".") == 0 for m in c)]
    assert cycles == []


@pytest.mark.parametrize("package", sorted(PACKAGES))
def test_no_module_over_400_lines(package: str) -> None:
    long = {
        module: n
        for module, path in MODULES.items()
        if module.split(".")[0] == package
        and (n := len(path.read_text(encoding="utf-8").splitlines())) > MAX_MODULE_LINES
    }
    assert long == {}


@pytest.mark.parametrize("package", sorted(PACKAGES))
def test_no_function_over_60_lines(package: str) -> None:
    long = {}
    for module, path in MODULES.items():
        if module.split(".")[0] != package:
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                size = (node.end_lineno or node.lineno) - node.lineno + 1
                if size > MAX_FUNCTION_LINES:
                    long[f"{module}.{node.name}"] = size
    assert long == {}


#: what only the libraries do — a CLI module naming one of these holds run or submission
#: policy (which run a name means, what its files hold, what a submit pins or sends)
POLICY = {
    "osmosis_local_runner.run.session.named": {"open_run", "RunFiles", "Identity"},
    "osmosis_local_runner.run.session.rundir": {"generate_name", "latest_unfinished", "check_name"},
    # a run is sequenced by run.session alone (issue 43): never its parts
    "osmosis_local_runner.run.session.invocation": {"Invocation", "pick_run"},
    "osmosis_local_runner.run.execute.runner": {"Runner"},
    "osmosis_local_runner.run.request.overrides": {
        "Overrides",
        "config_spec",
        "seed_spec",
        "seed_run_spec",
    },
    "osmosis_local_runner.run.session.journal": {"saved_settings", "read_journal", "Journal"},
    # what a setting's fate is (kept, secret, adopted, compared) is run.settings' alone
    "osmosis_local_runner.run.request.settings": {"FATE", "KEPT", "SECRET", "ONCE", "upgraded"},
    "osmosis_local_runner.run.share.import_plan": {"plan_import"},
    "osmosis_client.platform.git": {"plan_pin", "inspect_repo"},
    "osmosis_client.platform.eval.run_import": {"import_run"},
}
#: calls on the platform client that create or import: only the SDK's submission does;
#: a run's persistence (kept(), adopt(), changes_from()) is the settings object's own
POLICY_CALLS = {"create", "import_run", "locked", "archive", "kept", "adopt", "changes_from"}


def _runtime_names(tree: ast.AST) -> Iterator[tuple[str, str]]:
    """(module, name) of every ``from module import name`` outside TYPE_CHECKING."""
    for node in ast.iter_child_nodes(tree):
        if isinstance(node, ast.If) and _type_checking(node):
            yield from (pair for n in node.orelse for pair in _runtime_names(n))
        elif isinstance(node, ast.ImportFrom) and node.module:
            yield from ((node.module, alias.name) for alias in node.names)
        else:
            yield from _runtime_names(node)


def test_the_cli_holds_no_run_or_submission_policy() -> None:
    """Commands are options, one library call and rendering: the sequence of a named run
    lives in ``osmosis_local_runner.run.session.invocation``, uploads in ``run.upload``, hosted
    submission in ``osmosis_client.platform.eval.submission``."""
    wrong = []
    for module, path in MODULES.items():
        if not module.startswith("osmosis_cli."):
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        wrong += [
            f"{module} imports {name} from {source}"
            for source, name in _runtime_names(tree)
            if name in POLICY.get(source, set())
        ]
        wrong += [
            f"{module} calls .{node.func.attr}()"
            for node in ast.walk(tree)
            if isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr in POLICY_CALLS
            and not (isinstance(node.func.value, ast.Name) and node.func.value.id == "app")
        ]
    assert wrong == []


def _unnamed(page: str) -> list[str]:
    """The package folders and rooms (DOORS' keys) the page does not name: a folder as
    ``NAME/``, a room module as ``NAME.py`` or `` `NAME` ``."""
    folders = {
        path.relative_to(base).as_posix()
        for base in PACKAGES.values()
        for path in base.rglob("*")
        if path.is_dir() and (path / "__init__.py").is_file()
    }
    missing = [f"{f}/" for f in sorted(folders) if f"{f.rsplit('/', 1)[-1]}/" not in page]
    for room_ in sorted(DOORS):
        name = room_.split(".")[-1]
        shown = f"{name}/" if _is_package(room_) else f"{name}.py"
        if shown not in page and f"`{name}`" not in page:
            missing.append(room_)
    return missing


def _is_package(module: str) -> bool:
    path = MODULES.get(module)
    return path is None or path.name == "__init__.py"


def test_the_architecture_page_names_every_folder_and_room() -> None:
    """docs/architecture.md is true to the tree: a package folder or a room added
    without a line on the page fails here."""
    page = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
    assert _unnamed(page) == []
    # and the check bites: a page without the trackers' line names what it lacks
    assert "trackers/" in _unnamed(page.replace("trackers/", "trackers"))
