"""Loading a FastMCP tool server from a directory, as 0.2's ``--mcp DIR`` did
(rollout-protocol.md C): ``DIR/main.py`` runs in this process as the module ``main`` of
a synthetic package rooted at DIR, and its first ``fastmcp.FastMCP`` instance is the server.

- relative imports (``from .tools import x``) work; ``DIR/__init__.py`` is not executed;
- DIR is first on ``sys.path`` during the import (``from server import mcp`` works) and
  ``sys.path`` is restored afterwards; the modules imported from files under DIR are then
  dropped from ``sys.modules`` (the tools they registered stay), so a ``server`` or
  ``tools`` package of the MCP directory never shadows one of the project;
- ``__name__`` is not ``"__main__"``: the server's own ``mcp.run()`` never starts.
"""

from __future__ import annotations

import hashlib
import importlib.util
import sys
import types
import warnings
from pathlib import Path
from typing import Any

from osmosis_client.errors import InvalidInputError

INSTALL_HINT = "pip install 'osmosis-client[mcp]'"
_EXAMPLE = (
    "define one in main.py, e.g.\n"
    "    from fastmcp import FastMCP\n"
    '    mcp = FastMCP("tools")\n'
    "    @mcp.tool\n"
    "    def add(a: float, b: float) -> float: return a + b"
)


class MCPLoadError(InvalidInputError):
    """The MCP directory cannot give a tool server (missing, no main.py, no fastmcp, an
    import error, no FastMCP instance)."""

    def __init__(self, message: str, *, hint: str | None = None) -> None:
        super().__init__(message, hint=hint, code="BAD_MCP")


def fastmcp_class() -> type:
    try:
        # its dependencies' deprecation notices are not the user's (authlib even forces
        # its own to "always"): recorded, never shown
        with warnings.catch_warnings(record=True):
            import fastmcp
    except ImportError as exc:
        raise MCPLoadError("fastmcp is not installed", hint=f"install it: {INSTALL_HINT}") from exc
    return fastmcp.FastMCP


def load_mcp_server(directory: str | Path) -> Any:
    """The FastMCP server that ``DIR/main.py`` defines."""
    root = Path(directory).absolute()
    if not root.is_dir():
        raise MCPLoadError(f"MCP directory does not exist: {root}")
    main = root / "main.py"
    if not main.is_file():
        raise MCPLoadError(
            f"No main.py found in MCP directory: {root}",
            hint="the directory needs a main.py that creates (or imports) a FastMCP server",
        )
    server_class = fastmcp_class()
    module = _import_main(root, main)
    server = find_server(module, server_class)
    if server is None:
        raise MCPLoadError(f"No FastMCP instance found in {main}", hint=_EXAMPLE)
    return server


def find_server(module: Any, server_class: type) -> Any:
    """The first attribute, in ``dir()`` order, that is a ``server_class`` instance."""
    for name in dir(module):
        value = getattr(module, name, None)
        if isinstance(value, server_class):
            return value
    return None


def _import_main(root: Path, main: Path) -> types.ModuleType:
    package = f"_osmosis_mcp_{hashlib.sha256(str(root).encode()).hexdigest()[:8]}"
    hidden = _hide_shadowed(root)  # a `server` imported before is not DIR's `server`
    before = set(sys.modules)
    saved_path = list(sys.path)
    pkg = types.ModuleType(package)
    pkg.__path__ = [str(root)]
    pkg.__package__ = package
    sys.modules[package] = pkg
    sys.path.insert(0, str(root))
    try:
        spec = importlib.util.spec_from_file_location(f"{package}.main", main)
        if spec is None or spec.loader is None:
            raise MCPLoadError(f"cannot load {main} as a Python module")
        module = importlib.util.module_from_spec(spec)
        sys.modules[spec.name] = module
        try:
            with warnings.catch_warnings():  # as 0.2: fastmcp's dependencies warn at import
                warnings.simplefilter("ignore", DeprecationWarning)
                spec.loader.exec_module(module)
        except MCPLoadError:
            raise
        except Exception as exc:
            raise MCPLoadError(f"Error importing {main}: {type(exc).__name__}: {exc}") from exc
        return module
    finally:
        sys.path[:] = saved_path
        _forget_modules_under(root, before)
        sys.modules.update(hidden)


def _hide_shadowed(root: Path) -> dict[str, types.ModuleType]:
    """Take out of ``sys.modules`` (for the import only) the modules named like DIR's
    top-level modules and packages, so its sibling imports find DIR's own."""
    names = {p.stem for p in root.glob("*.py")}
    names |= {p.parent.name for p in root.glob("*/__init__.py")}
    names.discard("main")
    return {
        name: sys.modules.pop(name)
        for name in list(sys.modules)
        if name.partition(".")[0] in names and sys.modules.get(name) is not None
    }


def _forget_modules_under(root: Path, before: set[str]) -> None:
    for name in set(sys.modules) - before:
        module = sys.modules.get(name)
        file = getattr(module, "__file__", None)
        if name.startswith("_osmosis_mcp_") or (file and _is_under(Path(file), root)):
            sys.modules.pop(name, None)


def _is_under(path: Path, root: Path) -> bool:
    try:
        path.absolute().relative_to(root)
    except ValueError:
        return False
    return True
