"""The ``osmosis_ai`` 0.2 compatibility layer: code written for the published SDK's
agent-loop and reward API imports unchanged.

Nothing is installed under the name ``osmosis_ai``. While a front end loads user
code (``osmosis eval -m``, ``serve``, ``validate``) it may :func:`install` a
meta-path finder that serves these module names from osmosis-client's objects:

    osmosis_ai                          osmosis_reward, osmosis_rubric, evaluate_rubric,
                                        MissingAPIKeyError, ProviderRequestError,
                                        ModelNotFoundError, RubricResult
    osmosis_ai.rollout                  RolloutAgentLoop, RolloutContext, … (every 0.2 name)
    osmosis_ai.rollout.core             the schemas and exceptions
    osmosis_ai.rollout.core.schemas     tool schemas, RolloutRequest, RolloutStatus, …
    osmosis_ai.rollout.core.exceptions  OsmosisRolloutError and its subclasses
    osmosis_ai.rollout.tools            create_tool_result, execute_tool_calls, …
    osmosis_ai.rollout.mcp              MCPAgentLoop, load_mcp_server (fastmcp: the [mcp] extra)
    osmosis_ai.rollout.testing          the mock trainer of 0.2's testing guide
    osmosis_ai.rubric_eval              DEFAULT_API_KEY_ENV, evaluate_rubric, …

:func:`decide` says whether to: no ``osmosis_ai`` installed → the layer; a real
0.2.7–0.2.17 (which has these names) → the real one; a newer one (0.2.18+, 0.3.x,
which no longer has them) → the layer takes precedence *inside this process only*,
and the caller says so.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import importlib.util
import re
import sys
import threading
import types
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

_REWARDS = (
    "osmosis_client.rewards",
    ("osmosis_reward", "osmosis_rubric", "evaluate_rubric", "aevaluate_rubric", "RubricResult"),
)
_ERRORS = (
    "osmosis_client.errors",
    ("MissingAPIKeyError", "ProviderRequestError", "ModelNotFoundError"),
)
_LOOP = "osmosis_client.rollout.agent_loop"
_SCHEMAS = "osmosis_client.rollout.agent_loop.schemas"
_EXCEPTIONS = "osmosis_client.rollout.agent_loop.exceptions"
_TOOLS = "osmosis_client.rollout.agent_loop.tools"
_MCP = "osmosis_client.rollout.mcp"

#: alias name → (is a package, [(source module, names or None for its __all__ / publics)])
LAYOUT: dict[str, tuple[bool, list[tuple[str, Sequence[str] | None]]]] = {
    "osmosis_ai": (True, [_REWARDS, _ERRORS]),
    "osmosis_ai.rollout": (True, [(_LOOP, None)]),
    "osmosis_ai.rollout.core": (True, [(_SCHEMAS, None), (_EXCEPTIONS, None)]),
    "osmosis_ai.rollout.core.schemas": (False, [(_SCHEMAS, None)]),
    "osmosis_ai.rollout.core.exceptions": (False, [(_EXCEPTIONS, None)]),
    "osmosis_ai.rollout.tools": (False, [(_TOOLS, None)]),
    "osmosis_ai.rollout.mcp": (False, [(_MCP, None)]),
    "osmosis_ai.rollout.testing": (False, [("osmosis_client.rollout.agent_loop.testing", None)]),
    "osmosis_ai.rubric_eval": (False, [("osmosis_client.rewards.rubric_eval", None)]),
}

ANNOUNCEMENT = "using osmosis-client's osmosis_ai 0.2 compatibility layer"

Choice = Literal["layer", "real", "layer-over-real"]


@dataclass(frozen=True)
class Decision:
    choice: Choice
    installed: str | None  # the installed osmosis-ai version, if any
    message: str | None = None  # for the user, when a real package is shadowed


_HAS_02_API = re.compile(r"^0\.2\.(?:[7-9]|1[0-7])(?:\D|$)")


def decide() -> Decision:
    """Whether user code should get the layer (never imports ``osmosis_ai``)."""
    try:
        spec = importlib.util.find_spec("osmosis_ai")
    except (ImportError, ValueError):
        spec = None
    if spec is None or isinstance(spec.loader, _Finder):  # none, or only our start-up hook
        return Decision("layer", None)
    try:
        from importlib.metadata import PackageNotFoundError, version

        installed: str | None = version("osmosis-ai")
    except (PackageNotFoundError, ValueError):
        installed = None
    if installed is not None and _HAS_02_API.match(installed):
        return Decision("real", installed)
    shown = f"osmosis_ai {installed}" if installed else "an osmosis_ai package"
    return Decision(
        "layer-over-real",
        installed,
        f"{shown} is installed but has no 0.2 agent-loop API (RolloutAgentLoop was removed "
        "in 0.2.18); inside this command osmosis-client's compatibility layer serves "
        "osmosis_ai.rollout instead",
    )


class _Finder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    def __init__(self, on_first_use: Callable[[], None] | None, real_path: list[str]) -> None:
        self._on_first_use = on_first_use
        self._real_path = real_path
        self._lock = threading.Lock()
        self.used = False

    def find_spec(
        self, fullname: str, path: Any = None, target: Any = None
    ) -> importlib.machinery.ModuleSpec | None:
        if fullname not in LAYOUT:
            return None
        is_package = LAYOUT[fullname][0]
        return importlib.machinery.ModuleSpec(fullname, self, is_package=is_package)

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> types.ModuleType:
        with self._lock:
            if not self.used:
                self.used = True
                if self._on_first_use is not None:
                    self._on_first_use()
        is_package, sources = LAYOUT[spec.name]
        module = types.ModuleType(spec.name, f"{spec.name} (osmosis-client compatibility layer)")
        module.__osmosis_client_layer__ = True  # type: ignore[attr-defined]
        for source, names in sources:
            loaded = importlib.import_module(source)
            for name in names if names is not None else _public(loaded):
                setattr(module, name, getattr(loaded, name))
        if is_package:
            # a real installation's other submodules stay importable beside the layer
            parts = spec.name.split(".")[1:]
            module.__path__ = [
                str(Path(root, *parts)) for root in self._real_path if Path(root, *parts).is_dir()
            ]
        return module

    def exec_module(self, module: types.ModuleType) -> None:
        return None


def _public(module: types.ModuleType) -> list[str]:
    names = getattr(module, "__all__", None)
    if names is not None:
        return list(names)
    return [n for n in vars(module) if not n.startswith("_")]


_installed: _Finder | None = None


def install(on_first_use: Callable[[], None] | None = None) -> None:
    """Serve the ``osmosis_ai`` 0.2 names in this process (idempotent).

    ``on_first_use`` is called once, when user code first imports one of them.
    Modules of a real ``osmosis_ai`` already imported are dropped so the layer wins.
    """
    global _installed
    if _installed is not None:
        return
    real_path: list[str] = []
    try:
        spec = importlib.util.find_spec("osmosis_ai")
        if (
            spec is not None
            and not isinstance(spec.loader, _Finder)
            and spec.submodule_search_locations
        ):
            real_path = list(spec.submodule_search_locations)
    except (ImportError, ValueError):
        pass
    for name in [n for n in sys.modules if n in LAYOUT]:
        del sys.modules[name]
    _installed = _Finder(on_first_use, real_path)
    sys.meta_path.insert(0, _installed)


_last_resort: _Finder | None = None


def last_resort_spec(fullname: str) -> importlib.machinery.ModuleSpec | None:
    """The layer's spec for ``fullname`` when no installed package answered (the start-up
    hook's finder, last on ``sys.meta_path``). A real ``osmosis_ai``'s missing submodule
    stays missing: the real package always wins."""
    global _last_resort
    if fullname not in LAYOUT:
        return None
    top = sys.modules.get("osmosis_ai")
    if fullname != "osmosis_ai" and (
        top is None or not getattr(top, "__osmosis_client_layer__", False)
    ):
        return None
    if _last_resort is None:
        _last_resort = _Finder(None, [])
    return _last_resort.find_spec(fullname)


def without_startup_hook() -> None:
    """Take the start-up hook's finder off ``sys.meta_path`` in this process
    (``--no-compat``: only a real ``osmosis_ai`` imports)."""
    # the hook appends the finder class itself
    sys.meta_path[:] = [
        f for f in sys.meta_path if getattr(f, "__name__", "") != "_LastResortFinder"
    ]


def uninstall() -> None:
    """Remove the layer and the modules it served (tests)."""
    global _installed
    if _installed is None:
        return
    if _installed in sys.meta_path:
        sys.meta_path.remove(_installed)
    _installed = None
    for name in [n for n in sys.modules if n in LAYOUT]:
        del sys.modules[name]


def installed() -> bool:
    return _installed is not None
