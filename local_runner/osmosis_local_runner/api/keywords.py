"""``run_eval``'s keywords, typed (``Unpack`` of these ``TypedDict``s: editors complete
them and ``mypy --strict`` checks them), and how they become a :class:`RunRequest`.

:class:`SettingsKeywords` is :class:`~osmosis_local_runner.run.request.settings.RunSettings` by
name — ``tests/osmosis_local_runner/test_settings.py`` fails when a setting exists in
one and not the other."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, TypedDict

from osmosis_client.errors import InvalidInputError
from osmosis_client.llm.prices import PriceTable
from osmosis_client.llm.reasoning import Effort
from osmosis_local_runner.run.request.request import RunRequest, Uploader
from osmosis_local_runner.run.request.row_lists import parse_rows
from osmosis_local_runner.run.request.seed import SeedSource, rows_of
from osmosis_local_runner.run.request.settings import RunSettings

if TYPE_CHECKING:
    from osmosis_client import Client
    from osmosis_local_runner.api.running import RunProgress
    from osmosis_local_runner.trackers import Destination

Rows = Iterable[Mapping[str, Any]]


class SettingsKeywords(TypedDict, total=False):
    """Every setting of a run (``osmosis eval run``'s flags, by name)."""

    model: str | None
    base_url: str | None
    api_key_env: str | None
    api_key: str | None  # never written anywhere (the journal names it, to ask again)
    endpoints: str | Path | None
    headers: Mapping[str, str] | Sequence[str] | None  # values never written
    sampling_args: Mapping[str, Any] | None
    temperature: float | None
    max_tokens: int | None
    reasoning_effort: Effort | None
    think_tags: bool | None
    ca_bundle: str | Path | None
    baseline_model: str | None
    baseline_base_url: str | None
    baseline_api_key_env: str | None
    baseline_api_key: str | None
    dataset: str | Path | Rows | None  # a file; the seed form also takes rows in memory
    limit: int | None
    n: int | None
    pass_threshold: float | None
    raw_answers: bool
    seed: int | None
    rows: Iterable[int] | str | None  # source row indices, or "3,7,10-20"
    offset: int
    batch_size: int | None
    max_retries: int | None
    deadline: float | None  # seconds for this call; finished attempts are kept
    #: what the run's calls cost: a price table's file, "platform" (with ``client``), or
    #: a table (``client.models.prices([...])``)
    prices: str | Path | PriceTable | None
    max_cost: float | None  # USD: the run stops (resumable) once its calls cost this
    #: a call whose answer has no usage: "unknown" (the default) or counted as "free"
    unknown_usage: Literal["unknown", "free"] | None
    max_attempt_tokens: int | None
    #: the first model calls refused alike (a broken request) that stop the run (0: never)
    max_same_errors: int | None
    #: the model-call cache (docs/cache.md): on; a name for unidentifiable weights; a
    #: previous run whose recorded answers answer the calls that match
    cache: bool
    cache_scope: str | None
    replay: str | Path | None
    transcripts: bool
    by: str | None
    cluster_by: str | None  # a dataset column: rows sharing its value are one cluster
    rollout_mode: Literal["server", "native"] | None
    rollout_python: str | Path | None
    listener_port: int | None
    advertise_url: str | None
    rollout_port: int | None
    max_turns: int | None
    debug_dir: str | Path | None
    series: str | None  # the training series the run belongs to (one curve)
    step: int | None  # its step in that series (trackers log it there)


class SuiteKeywords(SettingsKeywords, total=False):
    """A suite's keywords: its settings override every entry's."""

    output: str | Path | None  # the suite run's directory
    root: str | Path | None
    resume: bool
    parallel: int
    log_to: str | Sequence[str] | None  # each finished entry goes to these trackers
    step: int | None


class RunKeywords(SettingsKeywords, total=False):
    """``run_eval``'s keywords: the settings, the seed form's source, where the run goes
    and how an existing one is treated."""

    name: str | None
    output: str | Path | None
    root: str | Path | None
    resume: bool
    fresh: bool
    retry_failed: bool
    on_progress: Callable[[RunProgress], None] | None
    upload: Client | None  # a finished named run goes to the platform with this client
    client: Client | None  # logged in: prices="platform" reads the platform's prices
    workflow: Any
    module: str | None
    agent_loop: Any
    mcp: str | Path | None
    eval_fns: Sequence[str | Callable[..., Any]] | None
    #: experiment trackers the finished run goes to: ``"mlflow[:URI]"``,
    #: ``"wandb[:PROJECT]"``, ``"trackio[:PROJECT]"`` (bare: the active tracker run)
    log_to: str | Sequence[str] | None
    #: the served weights' identity, when the caller knows it (a checkpoint's path and
    #: digest, a vLLM model's root/parent): recorded with the run
    weights: Mapping[str, Any] | None
    #: the values of the config's ``[secrets]`` (``resolve_secrets``); None: read from
    #: this process's environment
    secrets: Mapping[str, str] | None


#: keywords that are not settings, each with what it becomes
_RUN_ONLY = frozenset(RunKeywords.__annotations__) - frozenset(SettingsKeywords.__annotations__)
_SEED = ("workflow", "module", "agent_loop", "mcp", "eval_fns")
_PATHS = ("endpoints", "ca_bundle", "rollout_python", "debug_dir", "dataset", "prices")


def settings_of(options: Mapping[str, Any], allowed: Iterable[str] = ()) -> RunSettings:
    """The settings among ``options`` in their types; an unknown keyword is refused
    naming every option (``allowed``: the caller's other keywords)."""
    known = set(SettingsKeywords.__annotations__)
    unknown = sorted(set(options) - known - set(allowed))
    if unknown:
        raise InvalidInputError(
            f"unknown option{'s' if len(unknown) > 1 else ''}: {', '.join(unknown)}",
            hint=f"the options are {', '.join(sorted(known | set(allowed)))}",
            code="USAGE",
        )
    values = {k: v for k, v in options.items() if k in known and v is not None}
    for key in _PATHS:
        if isinstance(values.get(key), str | Path):
            values[key] = Path(values[key])
    if isinstance(values.get("rows"), str):
        values["rows"] = parse_rows(values["rows"])
    elif "rows" in values:
        values["rows"] = frozenset(int(i) for i in values["rows"])
    headers = values.get("headers")
    if isinstance(headers, Mapping):  # {"Name": "value"} as well as ["Name: value"]
        values["headers"] = [f"{k}: {v}" for k, v in headers.items()]
    elif headers is not None:
        values["headers"] = [str(h) for h in headers]
    if "sampling_args" in values:
        values["sampling_args"] = dict(values["sampling_args"])
    return RunSettings(**values)


def request_of(config: str | Path | None, options: Mapping[str, Any]) -> RunRequest:
    """``run_eval(config, **options)`` as the request every run is made from."""
    options = dict(options)
    dataset = options.get("dataset")
    in_memory = dataset is not None and not isinstance(dataset, str | Path)
    if in_memory:
        options.pop("dataset")
    settings = settings_of(options, _RUN_ONLY)
    seed = _seed(config, options, rows_of(dataset) if in_memory else None)
    output = options.get("output")
    root = options.get("root")
    return RunRequest(
        settings=settings,
        config=Path(config) if config is not None else None,
        seed=seed,
        name=options.get("name"),
        output=Path(output) if output is not None else None,
        root=Path(root) if root is not None else None,
        resume=bool(options.get("resume")),
        fresh=bool(options.get("fresh")),
        retry_failed=bool(options.get("retry_failed")),
        upload=_uploader(options.get("upload")),
        price_source=_prices_of(options.get("client")),
        log_to=destinations_of(options.get("log_to")),
        weights=dict(options["weights"]) if options.get("weights") else None,
        secrets=dict(options["secrets"]) if options.get("secrets") is not None else None,
    )


def destinations_of(given: str | Sequence[str] | None) -> tuple[Destination, ...]:
    """``log_to=`` as destinations, checked before anything runs."""
    from osmosis_local_runner.trackers import parse_destination

    if given is None:
        return ()
    return tuple(parse_destination(text) for text in ([given] if isinstance(given, str) else given))


def _seed(
    config: str | Path | None, options: Mapping[str, Any], rows: Sequence[Mapping[str, Any]] | None
) -> SeedSource | None:
    given = {key: options[key] for key in _SEED if options.get(key) is not None}
    if config is not None:
        if given or rows is not None:
            what = sorted(given) or ["rows in memory"]
            raise InvalidInputError(
                f"give an eval config or {', '.join(what)}, not both", code="USAGE"
            )
        return None
    mcp = given.get("mcp")
    return SeedSource(
        module=given.get("module"),
        mcp=Path(mcp) if mcp is not None else None,
        workflow=given.get("workflow"),
        agent_loop=given.get("agent_loop"),
        rows=rows,
        eval_fns=list(given.get("eval_fns") or ()),
    )


def _prices_of(client: Any) -> Callable[[list[str]], PriceTable] | None:
    return None if client is None else client.models.prices


def _uploader(client: Any) -> Uploader | None:
    if client is None:
        return None
    return lambda upload: upload.send(client)


__all__ = ["RunKeywords", "SettingsKeywords", "SuiteKeywords", "request_of", "settings_of"]
