"""The seed form's source — what runs, on which rows, judged by which eval fns — given as
text (``osmosis eval -m MODULE:ATTR -d FILE --eval-fn MODULE:FN``, ``--mcp DIR``) or as
objects in memory (``run_eval(workflow=…, dataset=[{…}], eval_fns=[fn])``), built into
a :class:`RunSpec` one way for both. What is text is kept in the journal, so a run
resumes with only its name (or ``-o``)."""

from __future__ import annotations

import inspect
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from osmosis_client.errors import InvalidInputError
from osmosis_local_runner.run.execute.eval_fns import EvalFn

#: how a rollout is named (exactly one of them)
FORMS = ("workflow", "module", "agent_loop", "mcp")


@dataclass
class SeedSource:
    """The rollout (one of ``module``, ``mcp``, ``workflow``, ``agent_loop``), the rows
    when they are in memory (else the settings' ``dataset`` file), and the eval fns."""

    module: str | None = None
    mcp: Path | None = None
    workflow: Any = None
    agent_loop: Any = None
    rows: Sequence[Mapping[str, Any]] | None = None
    eval_fns: Sequence[str | Callable[..., Any]] = field(default_factory=list)

    def given(self) -> list[str]:
        return [name for name in FORMS if getattr(self, name) is not None]

    def kept(self) -> dict[str, Any]:
        """What the journal keeps (text only: objects must be given again)."""
        kept: dict[str, Any] = {}
        if self.module is not None:
            kept["module"] = self.module
        if self.mcp is not None:
            kept["mcp"] = str(self.mcp)
        if self.eval_fns and all(isinstance(fn, str) for fn in self.eval_fns):
            kept["eval_fns"] = list(self.eval_fns)
        return kept

    def adopt(self, saved: Mapping[str, Any]) -> list[tuple[str, Any]]:
        """A resumed run named with nothing to run: the text its journal kept."""
        taken: list[tuple[str, Any]] = []
        if not self.given():
            if isinstance(saved.get("module"), str):
                self.module = saved["module"]
                taken.append(("module", self.module))
            elif isinstance(saved.get("mcp"), str):
                self.mcp = Path(saved["mcp"])
                taken.append(("mcp", self.mcp))
        fns = saved.get("eval_fns")
        if not self.eval_fns and isinstance(fns, list) and all(isinstance(f, str) for f in fns):
            self.eval_fns = list(fns)
            taken.append(("eval_fns", self.eval_fns))
        return taken

    def label(self) -> str:
        """What the published files call the rollout."""
        if self.module is not None:
            return self.module
        if self.mcp is not None:
            return str(self.mcp)
        return _label(self.workflow if self.workflow is not None else self.agent_loop)

    def dataset(self, given: Path | None, results: Path) -> Path:
        """The rows' file: the one given, or the rows in memory written beside the
        results (a resume reads them there)."""
        if self.rows is None:
            if given is None:
                raise InvalidInputError("give a dataset (a file, or a list of rows)", code="USAGE")
            return given
        if given is not None:
            raise InvalidInputError(
                "give the rows in memory or a dataset file, not both", code="USAGE"
            )
        return write_rows(self.rows, results.with_name(f"{results.stem}.dataset.jsonl"))

    def rollout(self, flags: Any) -> Any:
        """The rollout kind (nothing started yet)."""
        from osmosis_local_runner.run.request.overrides import mcp_rollout, seed_rollout

        given = self.given()
        if len(given) != 1:
            raise InvalidInputError(
                "give one rollout: module (MODULE:ATTR), mcp (a directory), a workflow or "
                "an agent loop" + (f" — not {' and '.join(given)}" if given else ""),
                code="USAGE",
            )
        if self.module is not None:
            return seed_rollout(self.module, flags)
        if self.mcp is not None:
            return mcp_rollout(Path(self.mcp), flags)
        return _object_rollout(
            self.workflow if self.workflow is not None else self.agent_loop, flags
        )

    def fns(self) -> list[EvalFn]:
        return [_eval_fn(fn) for fn in self.eval_fns]


def _object_rollout(value: Any, flags: Any) -> Any:
    """A workflow (class, instance or ``run(ctx)`` function) or a 0.2 agent loop object."""
    from osmosis_local_runner.run.request.overrides import object_rollout

    return object_rollout(value, _label(value), flags)


def _label(value: Any) -> str:
    target = value if inspect.isclass(value) or inspect.isroutine(value) else type(value)
    return f"{getattr(target, '__module__', '?')}:{getattr(target, '__qualname__', '?')}"


def _eval_fn(value: str | Callable[..., Any]) -> EvalFn:
    """``"module:fn"`` as the CLI loads it, or a function given as it is."""
    from osmosis_local_runner.run.execute.discovery import load_eval_fn
    from osmosis_local_runner.run.execute.eval_fns import eval_mode, make_binder

    if isinstance(value, str):
        return load_eval_fn(value)
    if not callable(value) or inspect.isclass(value):
        raise InvalidInputError(f"{value!r} is not an eval function", code="BAD_EVAL_FN")
    name = getattr(value, "__name__", None) or _label(value)
    mode = eval_mode(value, name)
    is_async = inspect.iscoroutinefunction(inspect.unwrap(value))
    return EvalFn(name, value, mode, is_async, make_binder(value, mode, name))


def rows_of(value: Any) -> Sequence[Mapping[str, Any]]:
    """Rows given in memory (a list of dicts), checked to be a sequence."""
    if isinstance(value, Mapping | str | bytes) or not isinstance(value, Iterable):
        raise InvalidInputError(
            "dataset= is a file path or a list of rows (dicts)", code="BAD_DATASET"
        )
    return list(value)


def write_rows(rows: Iterable[Mapping[str, Any]], path: Path) -> Path:
    """In-memory rows as the JSONL dataset the run reads (a row must be a mapping)."""
    import json

    from osmosis_client._fs import atomic_write_chunks

    def lines() -> Iterable[bytes]:
        for index, row in enumerate(rows):
            if not isinstance(row, Mapping):
                raise InvalidInputError(
                    f"dataset row {index} is a {type(row).__name__}, not a mapping",
                    code="BAD_DATASET",
                )
            # the standard library's spacing, as ever: the rows' file is digested, and a
            # run resumed by a newer version must find the same digest
            yield json.dumps(dict(row), ensure_ascii=False).encode() + b"\n"

    atomic_write_chunks(path, lines())
    return path


__all__ = ["SeedSource", "rows_of", "write_rows"]
