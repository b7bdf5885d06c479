"""The keywords of ``run_eval`` → the runner's :class:`RunSpec` and what the run is
(:class:`Identity`), through the same functions the CLI uses (``config_spec``,
``seed_run_spec``): one precedence, one meaning for every flag."""

from __future__ import annotations

import dataclasses
import inspect
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from osmosis_client.errors import InvalidInputError
from osmosis_local_runner.run.eval_fns import EvalFn
from osmosis_local_runner.run.named import Identity
from osmosis_local_runner.run.overrides import Overrides
from osmosis_local_runner.run.spec import RunSpec

#: keywords of the seed form (the rollout, its rows and eval fns), not Overrides fields
SEED_KEYS = ("workflow", "module", "agent_loop", "mcp", "dataset", "eval_fns")
#: Overrides fields that are not a user's keyword (set by the API itself)
INTERNAL = ("output", "run_dir", "resume", "retry_failed", "settings", "server_echo")


@dataclass(frozen=True)
class Built:
    spec: RunSpec
    identity: Identity


def build_spec(
    config: str | Path | None,
    results: Path,
    *,
    run_dir: Path | None = None,
    resume: bool = False,
    retry_failed: bool = False,
    **options: Any,
) -> Built:
    seed = {key: options.pop(key) for key in SEED_KEYS if key in options}
    flags = overrides(results, options, run_dir=run_dir, resume=resume, retry_failed=retry_failed)
    if config is not None:
        if seed.keys() - {"dataset"}:
            raise InvalidInputError(
                f"give an eval config or {', '.join(sorted(seed))}, not both", code="USAGE"
            )
        return _config_form(Path(config), flags, seed.get("dataset"))
    return _seed_form(seed, flags, results)


def overrides(results: Path, options: Mapping[str, Any], **fixed: Any) -> Overrides:
    """The flags: every ``Overrides`` field by name, paths and rows in their types."""
    known = {f.name for f in dataclasses.fields(Overrides)} - set(INTERNAL)
    unknown = sorted(set(options) - known)
    if unknown:
        raise InvalidInputError(
            f"unknown option{'s' if len(unknown) > 1 else ''}: {', '.join(unknown)}",
            hint=f"the options are {', '.join(sorted(known | set(SEED_KEYS)))}",
            code="USAGE",
        )
    values = {k: v for k, v in options.items() if v is not None}
    for key in ("rollout_python", "endpoints", "ca_bundle", "debug_dir"):
        if key in values:
            values[key] = Path(values[key])
    if "rows" in values:
        values["rows"] = frozenset(int(i) for i in values["rows"])
    headers = values.get("headers")
    if isinstance(headers, Mapping):  # {"Name": "value"} as well as ["Name: value"]
        values["headers"] = [f"{k}: {v}" for k, v in headers.items()]
    settings = {k: v for k, v in values.items() if isinstance(v, str | int | float | bool)}
    return Overrides(output=results, settings=settings, **fixed, **values)


def _config_form(path: Path, flags: Overrides, dataset: Any) -> Built:
    from osmosis_client.platform.eval_config import load_config
    from osmosis_local_runner.run.overrides import config_spec

    if dataset is not None:
        if not isinstance(dataset, str | Path):
            raise InvalidInputError("with an eval config, dataset= is a file path", code="USAGE")
        flags.dataset = Path(dataset)
    config = load_config(path)
    return Built(config_spec(config, flags), Identity.of(config))


def _seed_form(seed: dict[str, Any], flags: Overrides, results: Path) -> Built:
    from osmosis_local_runner.run.overrides import mcp_rollout, seed_rollout, seed_run_spec

    given = [key for key in ("workflow", "module", "agent_loop", "mcp") if key in seed]
    if len(given) != 1:
        raise InvalidInputError(
            "give what to run: an eval config, or one of workflow=, module=, agent_loop=, mcp=",
            code="USAGE",
        )
    if "dataset" not in seed:
        raise InvalidInputError("give dataset= (a file, or a list of rows)", code="USAGE")
    what = given[0]
    if what == "module":
        rollout, label = seed_rollout(str(seed["module"]), flags), str(seed["module"])
    elif what == "mcp":
        rollout, label = mcp_rollout(Path(seed["mcp"]), flags), str(seed["mcp"])
    else:
        rollout, label = _object_rollout(seed[what], flags)
    dataset = _dataset(seed["dataset"], results)
    fns = [_eval_fn(fn) for fn in seed.get("eval_fns") or ()]
    spec = seed_run_spec(rollout, dataset, fns, flags)
    identity = Identity(dataset=dataset.stem, model=str(flags.model), rollout=label)
    return Built(spec, identity)


def _object_rollout(value: Any, flags: Overrides) -> tuple[Any, str]:
    """A workflow (class, instance or ``run(ctx)`` function) or a 0.2 agent loop object."""
    from osmosis_client.rollout.agent_loop import is_agent_loop
    from osmosis_local_runner.run.discovery import as_workflow, load_agent_loop, object_digest
    from osmosis_local_runner.run.kinds.agent_loop import AgentLoopRollout
    from osmosis_local_runner.run.kinds.native import NativeRollout

    label = _label(value)
    if is_agent_loop(value):
        loop = load_agent_loop(value, label)
        kind: Any = AgentLoopRollout(
            loop, source=label, digest=object_digest(value), max_turns=flags.max_turns or 10,
            completion_params=flags.sampling(), debug_dir=flags.debug_dir,
        )  # fmt: skip
        return kind, label
    workflow = as_workflow(value, label)
    return NativeRollout(workflow, source=label, digest=object_digest(value)), label


def _label(value: Any) -> str:
    target = value if inspect.isclass(value) or inspect.isroutine(value) else type(value)
    return f"{getattr(target, '__module__', '?')}:{getattr(target, '__qualname__', '?')}"


def _eval_fn(value: str | Callable[..., Any]) -> EvalFn:
    """``"module:fn"`` as the CLI loads it, or a function given as it is."""
    from osmosis_local_runner.run.discovery import load_eval_fn
    from osmosis_local_runner.run.eval_fns import eval_mode, make_binder

    if isinstance(value, str):
        return load_eval_fn(value)
    if not callable(value) or inspect.isclass(value):
        raise InvalidInputError(f"{value!r} is not an eval function", code="BAD_EVAL_FN")
    name = getattr(value, "__name__", None) or _label(value)
    mode = eval_mode(value, name)
    is_async = inspect.iscoroutinefunction(inspect.unwrap(value))
    return EvalFn(name, value, mode, is_async, make_binder(value, mode, name))


def _dataset(value: Any, results: Path) -> Path:
    """A dataset file, or rows in memory written beside the results (resume reads them)."""
    if isinstance(value, str | Path):
        return Path(value)
    if isinstance(value, Mapping) or not isinstance(value, Iterable):
        raise InvalidInputError(
            "dataset= is a file path or a list of rows (dicts)", code="BAD_DATASET"
        )
    rows: Sequence[Any] = list(value)
    return write_rows(rows, results.with_name(f"{results.stem}.dataset.jsonl"))


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
            yield json.dumps(dict(row), ensure_ascii=False).encode() + b"\n"

    atomic_write_chunks(path, lines())
    return path
