"""Loading user code: rollout entrypoints, ``-m MODULE:ATTR`` workflows and eval functions.

Everything is checked before the run starts; a problem is an
``InvalidInputError`` (exit 2) naming what was found.
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib
import importlib.util
import inspect
import os
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

from osmosis_client.errors import InvalidInputError
from osmosis_client.rollout import AgentWorkflow, Grader
from osmosis_local_runner.run.execute.eval_fns import EvalFn, eval_mode, make_binder
from osmosis_local_runner.run.execute.user_code import guard_exits, telling_real_interrupts
from osmosis_local_runner.run.kinds.native import NativeRollout


def _import_error(what: str, exc: BaseException) -> InvalidInputError:
    detail = _shortened(f"{type(exc).__name__}: {exc}".splitlines()[0])
    return InvalidInputError(
        f"cannot import {what} ({detail})",
        hint="fix the module, or check the MODULE:ATTR path",
        code="BAD_MODULE",
    )


def _shortened(text: str, limit: int = 1000) -> str:
    """A long first line cut at a word boundary (a signature shows whole up to 1000)."""
    if len(text) <= limit:
        return text
    cut = text[:limit]
    return cut[: cut.rfind(" ")] + " …" if " " in cut else cut + "…"


def import_file(path: Path, *, extra_paths: tuple[Path, ...] = ()) -> ModuleType:
    """Import a ``.py`` file as a module (its folder and ``extra_paths`` go on sys.path)."""
    path = path.resolve()
    if not path.is_file():
        raise InvalidInputError(f"{path} does not exist", code="BAD_MODULE")
    for folder in (path.parent, *extra_paths):
        if str(folder) not in sys.path:
            sys.path.insert(0, str(folder))
    name = f"_osmosis_user_{abs(hash(str(path)))}_{path.stem}"
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise InvalidInputError(f"cannot load {path} as a Python module", code="BAD_MODULE")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    with _loading_user_code(str(path)):
        try:
            spec.loader.exec_module(module)
        except BaseException:
            sys.modules.pop(name, None)
            raise
    return module


@contextlib.contextmanager
def _loading_user_code(what: str) -> Iterator[None]:
    """Importing user code: anything it raises — even ``sys.exit()``, ``os._exit()`` or a
    ``KeyboardInterrupt`` of its own — is one clear exit-2 error; a real Ctrl-C stops."""
    with telling_real_interrupts() as interrupts, guard_exits():
        try:
            yield
        except KeyboardInterrupt as exc:
            if interrupts.real:
                raise
            raise _import_error(what, KeyboardInterrupt("raised at import")) from exc
        except SystemExit as exc:
            raise InvalidInputError(
                f"cannot import {what}: it called sys.exit({exc.code!r}) at import",
                hint='move that call under `if __name__ == "__main__":`',
                code="BAD_MODULE",
            ) from exc
        except InvalidInputError:
            raise
        except BaseException as exc:
            raise _import_error(what, exc) from exc


def load_attr(spec: str, *, cwd: Path | None = None) -> tuple[Any, str]:
    """``MODULE:ATTR`` (dotted, importable from ``cwd``) or ``path/to/file.py:ATTR``."""
    module_part, sep, attr = spec.rpartition(":")
    if not sep or not module_part or not attr:
        raise InvalidInputError(
            f"{spec!r} is not MODULE:ATTR", hint="e.g. rewards:compute_reward", code="BAD_MODULE"
        )
    base = (cwd or Path.cwd()).resolve()
    if module_part.endswith(".py") or "/" in module_part:
        module = import_file(base / module_part, extra_paths=(base,))
    else:
        if str(base) not in sys.path:
            sys.path.insert(0, str(base))
        try:
            with _loading_user_code(f"module {module_part}"):
                module = importlib.import_module(module_part)
        except InvalidInputError as exc:
            raise _with_file_form(exc, module_part, attr, base) from exc
    value = module
    for part in attr.split("."):
        if not hasattr(value, part):
            raise InvalidInputError(
                f"{module_part} has no attribute {attr!r}",
                hint="check the name after the ':'",
                code="BAD_MODULE",
            )
        value = getattr(value, part)
    return value, spec


#: folders never searched for a module's file (environments, caches, our own runs)
_SKIPPED = {".git", ".venv", "venv", ".osmosis", "node_modules", "__pycache__", ".tox"}


def _with_file_form(
    exc: InvalidInputError, module_part: str, attr: str, base: Path
) -> InvalidInputError:
    """A module that is not importable from ``base``: when a file of that name lies below
    it (``rollouts/demo/rewards.py``), the hint is the file-path form that works."""
    if "ModuleNotFoundError" not in exc.message or f"'{module_part.split('.')[0]}'" not in (
        exc.message
    ):
        return exc
    found = find_module_files(module_part, base)
    if found:
        forms = " or ".join(f"{path}:{attr}" for path in found[:2])
        hint = f"{module_part} is not importable from {base}; give the file: {forms}"
    else:
        hint = (
            f"{module_part} must be importable from {base} (run from the folder that holds "
            f"it), or give a file path: path/to/{module_part.replace('.', '/')}.py:{attr}"
        )
    return InvalidInputError(exc.message, hint=hint, code=exc.code, data=exc.data)


def find_module_files(module_part: str, base: Path, depth: int = 4) -> list[str]:
    """``rewards`` → ``rollouts/demo/rewards.py`` (paths relative to ``base``, nearest
    first): where a module that failed to import lives below the working directory."""
    relative = Path(*module_part.split("."))
    found: list[str] = []
    level = [base]
    for _ in range(depth):
        below: list[Path] = []
        for folder in level:
            try:
                children = sorted(folder.iterdir())
            except OSError:
                continue
            for child in children:
                if child.name in _SKIPPED or not child.is_dir():
                    continue
                if (child / relative).with_suffix(".py").is_file():
                    found.append(str((child / relative).with_suffix(".py").relative_to(base)))
                below.append(child)
        if found or len(below) > 2000:
            break
        level = below
    return found


def _instantiate(value: Any, base: type, what: str) -> Any:
    if inspect.isclass(value):
        try:
            return value()
        except Exception as exc:
            raise InvalidInputError(
                f"cannot create {what} {value.__name__}() ({type(exc).__name__}: {exc})",
                hint=f"a {what} class must take no constructor arguments",
            ) from exc
    return value


def _check_method(obj: Any, method: str, what: str) -> None:
    if not callable(getattr(obj, method, None)):
        raise InvalidInputError(
            f"{what} {type(obj).__name__} has no {method}() method",
            hint=f"implement `async def {method}(self, ctx)`",
        )
    if getattr(type(obj), method, None) is getattr(
        AgentWorkflow if method == "run" else Grader, method
    ):
        raise InvalidInputError(f"{what} {type(obj).__name__} does not implement {method}()")


def as_workflow(value: Any, where: str) -> Any:
    """A workflow instance from a class, an instance, or a plain ``run(ctx)`` function."""
    if inspect.isfunction(value) or inspect.iscoroutinefunction(value):
        return _FunctionWorkflow(value)
    workflow = _instantiate(value, AgentWorkflow, "workflow")
    _check_method(workflow, "run", f"workflow from {where}:")
    return workflow


class _FunctionWorkflow:
    """Adapts ``[async] def run(ctx)`` to the workflow interface."""

    def __init__(self, fn: Callable[..., Any]) -> None:
        self.run = fn
        self.__name__ = getattr(fn, "__name__", "run")


SKIPPED_DIRS = frozenset({"__pycache__", "node_modules"})


def _source_files(folder: Path) -> list[Path]:
    """``*.py`` and project/lock files under ``folder``; hidden folders (``.venv``,
    ``.git``), caches and ``node_modules`` are never entered."""
    found = []
    for current, dirs, files in os.walk(folder):
        dirs[:] = sorted(d for d in dirs if not d.startswith(".") and d not in SKIPPED_DIRS)
        for name in files:
            if name.endswith(".py") or name in ("pyproject.toml", "uv.lock"):
                found.append(Path(current, name))
    return sorted(found)


def source_digest(*paths: Path) -> str:
    """A short digest of source files (a directory: its ``*.py`` and lock/project files),
    so ``--resume`` notices changed code."""
    digest = hashlib.blake2b(digest_size=10)
    for path in paths:
        files = _source_files(path) if path.is_dir() else [path]
        for file in files:
            try:
                digest.update(str(file.relative_to(path) if path.is_dir() else file.name).encode())
                digest.update(file.read_bytes())
            except OSError:
                continue
    return digest.hexdigest()


def object_digest(obj: Any) -> str:
    """The digest of the file that defines ``obj`` ("" when it has none)."""
    try:
        source = inspect.getsourcefile(inspect.unwrap(obj) if callable(obj) else type(obj))
    except (TypeError, OSError):
        source = None
    if source is None and not callable(obj):
        try:
            source = inspect.getsourcefile(type(obj))
        except (TypeError, OSError):
            source = None
    return source_digest(Path(source)) if source else ""


def load_workflow(spec: str, *, cwd: Path | None = None) -> NativeRollout:
    """``-m MODULE:ATTR``: an ``AgentWorkflow`` (class or instance) or a ``run(ctx)`` function."""
    value, where = load_attr(spec, cwd=cwd)
    workflow = as_workflow(value, where)
    return NativeRollout(workflow, source=where, digest=object_digest(value))


def load_agent_loop(value: Any, where: str) -> Any:
    """A ``RolloutAgentLoop`` instance from a class or an instance, checked."""
    from osmosis_client.rollout.agent_loop import is_agent_loop

    if not is_agent_loop(value):
        raise InvalidInputError(
            f"{where} is not a RolloutAgentLoop (got {type(value).__name__})",
            hint="point -m at your RolloutAgentLoop subclass or an instance of it",
            code="BAD_MODULE",
        )
    loop = _instantiate(value, object, "agent loop")
    for method in ("get_tools", "run"):
        if not callable(getattr(loop, method, None)):
            raise InvalidInputError(f"agent loop {type(loop).__name__} has no {method}()")
    return loop


def load_mcp(directory: Path) -> tuple[Any, str]:
    """``--mcp DIR``: 0.2's MCP agent loop over the FastMCP server of ``DIR/main.py``,
    and the digest of DIR's sources (``--resume`` notices a changed tool)."""
    import logging

    from osmosis_client.rollout.mcp import MCPAgentLoop, load_mcp_server

    with _loading_user_code(str(directory / "main.py")):
        server = load_mcp_server(directory)
        try:
            loop = MCPAgentLoop(server)
        except Exception as exc:
            raise InvalidInputError(
                f"cannot read the tools of {directory / 'main.py'}: {type(exc).__name__}: {exc}",
                code="BAD_MCP",
            ) from exc
    # a failing tool is the model's business (its message reads "Error: …"); fastmcp's own
    # traceback of it would bury the progress display
    for name in ("FastMCP", "fastmcp"):
        logging.getLogger(name).setLevel(logging.CRITICAL)
    return loop, source_digest(directory.absolute())


def load_rollout(entrypoint: Path, root: Path) -> tuple[NativeRollout, EvalFn]:
    """The workflow and grader of a rollout entrypoint (``workflow``/``grader`` win)."""
    module = import_file(entrypoint, extra_paths=(root,))
    where = (
        str(entrypoint.relative_to(root)) if entrypoint.is_relative_to(root) else str(entrypoint)
    )
    workflow_value = getattr(module, "workflow", None) or _single(
        module, AgentWorkflow, "AgentWorkflow", where
    )
    grader_value = getattr(module, "grader", None) or _single(module, Grader, "Grader", where)
    workflow = as_workflow(workflow_value, where)
    grader = _instantiate(grader_value, Grader, "grader")
    _check_method(grader, "grade", f"grader from {where}:")
    grade = grader.grade
    rollout = NativeRollout(workflow, source=where, digest=source_digest(entrypoint.parent))
    return rollout, EvalFn("grader", grade, "grader", inspect.iscoroutinefunction(grade))


def _single(module: ModuleType, base: type, label: str, where: str) -> type:
    found = [
        value
        for value in vars(module).values()
        if inspect.isclass(value)
        and issubclass(value, base)
        and value is not base
        and value.__module__ == module.__name__
    ]
    if len(found) == 1:
        return found[0]
    names = ", ".join(sorted(v.__name__ for v in found))
    attr = "workflow" if base is AgentWorkflow else "grader"
    if not found:
        raise InvalidInputError(
            f"{where} defines no {label} subclass",
            hint=f"define one, or set a module attribute `{attr} = …`",
            code="BAD_ROLLOUT",
        )
    raise InvalidInputError(
        f"{where} defines several {label} subclasses ({names})",
        hint=f"name the one to use with a module attribute `{attr} = …`",
        code="BAD_ROLLOUT",
    )


def load_eval_fn(spec: str, *, cwd: Path | None = None, graders: bool = False) -> EvalFn:
    """An eval fn; with ``graders``, a rollout's ``Grader`` (class or instance) too, named
    ``grader`` as in the results of TOML runs."""
    value, name = load_attr(spec, cwd=cwd)
    if graders and (
        isinstance(value, Grader) or (inspect.isclass(value) and issubclass(value, Grader))
    ):
        grader = _instantiate(value, Grader, "grader")
        _check_method(grader, "grade", f"grader {spec}:")
        grade = grader.grade
        return EvalFn("grader", grade, "grader", inspect.iscoroutinefunction(grade))
    if inspect.isclass(value):
        raise InvalidInputError(
            f"{spec} is a class; an eval fn must be a function", code="BAD_EVAL_FN"
        )
    if not callable(value):
        raise InvalidInputError(f"{spec} is not a function", code="BAD_EVAL_FN")
    mode = eval_mode(value, spec)
    target = inspect.unwrap(value)
    is_async = inspect.iscoroutinefunction(value) or inspect.iscoroutinefunction(target)
    return EvalFn(name, value, mode, is_async, make_binder(value, mode, spec))
