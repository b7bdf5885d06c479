"""A run's settings, typed once, and what becomes of each when the run is kept.

Every setting of a local run — ``osmosis eval run``'s flags, the seed form's, and
``run_eval``'s keywords — is a field of :class:`RunSettings`, and the field says what
happens to it:

- ``KEPT``: written in the run's journal; a resumed run adopts it when it is not given
  again; a finished run asked for again with another value is refused
  (``RESUME_MISMATCH``) when it changes what the run is (``compared``);
- ``SECRET``: never written anywhere — journal, manifest, results, logs, printed
  commands, ``--json``; the journal names it (``withheld``) so a resume asks for it again
  rather than silently running without it. A URL holding a password and every header
  value are secrets too, whatever their field;
- ``ONCE``: this invocation's own (its deadline, its debug traces): never kept.

The CLI's options and ``run_eval``'s keywords are this object's fields by name
(``tests/osmosis_local_runner/test_settings.py`` holds both faces to it), so a setting
cannot exist in one face only.
"""

from __future__ import annotations

import dataclasses
import json
import typing
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from osmosis_client._redact import redact_url
from osmosis_client.errors import InvalidInputError
from osmosis_client.llm.prices import PriceTable
from osmosis_local_runner.run.request.row_lists import parse_rows, rows_text

Keep = Literal["kept", "secret", "once"]
KEPT: Keep = "kept"
SECRET: Keep = "secret"
ONCE: Keep = "once"


def check_effort(effort: str) -> str:
    from osmosis_client.llm.reasoning import EFFORTS

    if effort not in EFFORTS:
        raise InvalidInputError(
            f"reasoning_effort must be one of {', '.join(EFFORTS)}, not {effort!r}",
            code="INVALID_REASONING_EFFORT",
        )
    return effort


def check_series(name: str) -> str:
    """A series name: what its runs are called by (``SERIES-step-N``) and trackers key."""
    import re

    if not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}", name):
        raise InvalidInputError(
            f"series {name!r} is not a name",
            hint="letters, digits, '-', '_', '.' (at most 64), starting with a letter or digit",
            code="USAGE",
        )
    return name


def _setting(default: Any = None, keep: Keep = KEPT, compared: str | None = None) -> Any:
    """A field and its fate (``compared``: the fingerprint key a finished run's value is
    read from when the run is asked for again)."""
    meta = {"keep": keep, "compared": compared}
    if isinstance(default, list | dict):
        kind = type(default)
        return field(default_factory=kind, metadata=meta)
    return field(default=default, metadata=meta)


@dataclass(kw_only=True)
class RunSettings:
    """The settings of one local run (``None``: not given — the config's value, else the
    built-in default, applies)."""

    # the model
    model: str | None = _setting(compared="model")
    base_url: str | None = _setting()
    api_key_env: str | None = _setting()
    api_key: str | None = _setting(keep=SECRET)
    endpoints: Path | None = _setting()
    headers: list[str] = _setting([])  # "Name: value" — names kept, values never
    sampling_args: dict[str, Any] = _setting({})
    temperature: float | None = _setting()
    max_tokens: int | None = _setting()
    #: how hard a reasoning model thinks (mapped per provider: docs/models.md)
    reasoning_effort: str | None = _setting()
    #: split ``<think>…</think>`` out of answers (None: the endpoint row's, else yes)
    think_tags: bool | None = _setting()
    ca_bundle: Path | None = _setting()
    baseline_model: str | None = _setting(compared="baseline")
    baseline_base_url: str | None = _setting()
    baseline_api_key_env: str | None = _setting()
    baseline_api_key: str | None = _setting(keep=SECRET)
    # the rows and how they are judged
    dataset: Path | None = _setting()
    limit: int | None = _setting(compared="limit")
    n: int | None = _setting(compared="n")
    pass_threshold: float | None = _setting(compared="pass_threshold")
    #: eval fns get the reasoning too (``<think>…</think>`` before the answer)
    raw_answers: bool = _setting(False, compared="raw_answers")
    seed: int | None = _setting(compared="seed")
    rows: frozenset[int] | None = _setting(compared="rows")  # source rows (wins over limit)
    offset: int = _setting(0, compared="offset")  # rows skipped first (the seed form)
    # pace and what is kept
    batch_size: int | None = _setting()
    max_retries: int | None = _setting()
    deadline: float | None = _setting(keep=ONCE)  # this invocation's budget, in seconds
    #: what model calls cost: a price table's file (USD per million tokens), ``platform``
    #: (the platform's published prices: a logged-in caller supplies them), or a table
    #: in memory (not kept: give it again to resume)
    prices: Path | PriceTable | None = _setting()
    #: stop once the run's calls have cost this much, in USD (its whole cost so far,
    #: every invocation's: kept, so a resume keeps the budget)
    max_cost: float | None = _setting()
    #: how a call whose answer carried no (or insane) usage is counted: ``unknown`` (its
    #: cost is unknown; with a budget the run stops rather than go on blind) or ``free``
    unknown_usage: str | None = _setting()
    #: an attempt's rollout gets no more model calls past this many tokens
    max_attempt_tokens: int | None = _setting()
    #: the run's first model calls refused alike (one 4xx, one message) that stop it: a
    #: broken request (None: 5; 0: never stop)
    max_same_errors: int | None = _setting()
    #: answer model calls from the call cache where everything that decides the answer
    #: is the same (docs/cache.md); store the rest
    cache: bool = _setting(False)
    #: a name for the weights behind an endpoint that cannot say which they are
    cache_scope: str | None = _setting()
    #: a previous run whose recorded answers answer the calls that match them
    replay: str | None = _setting()
    transcripts: bool = _setting(True)
    by: str | None = _setting()
    #: a dataset column whose equal values share a context: the mean's interval treats
    #: their rows as one cluster (``metadata.KEY`` or ``KEY``)
    cluster_by: str | None = _setting()
    # the rollout
    rollout_mode: str | None = _setting()
    rollout_python: Path | None = _setting()
    listener_port: int | None = _setting()
    advertise_url: str | None = _setting()
    rollout_port: int | None = _setting()
    max_turns: int | None = _setting()
    debug_dir: Path | None = _setting(keep=ONCE)
    # where it stands in a training: a series (one curve) and its step — recorded facts,
    # never guessed from a run's name; a run with no series is in no sweep
    series: str | None = _setting()
    step: int | None = _setting()

    def __post_init__(self) -> None:
        if self.series is not None:
            check_series(self.series)
        if self.cluster_by is not None:
            self.cluster_by = self.cluster_by.removeprefix("metadata.")

    def sampling(self) -> dict[str, Any]:
        """The sampling settings given (and only those): ``sampling_args``, then the
        ``temperature`` / ``max_tokens`` shortcuts over it."""
        params: dict[str, Any] = dict(self.sampling_args)
        if self.temperature is not None:
            params["temperature"] = self.temperature
        if self.max_tokens is not None:
            params["max_tokens"] = self.max_tokens
        if self.reasoning_effort is not None:
            params["reasoning_effort"] = check_effort(self.reasoning_effort)
        return params

    def replaced_keys(self) -> set[str]:
        """The eval config's [experiment] keys these settings give another value for
        (the config's value is not used: a template's placeholder there is fine)."""
        given = {"dataset": self.dataset, "model_path": self.model}
        return {key for key, value in given.items() if value is not None}

    # ------------------------------------------------------------ persistence

    def given(self) -> dict[str, Any]:
        """The settings not at their defaults, by name."""
        return {f.name: getattr(self, f.name) for f in SETTINGS if _given(self, f)}

    def kept(self) -> dict[str, Any]:
        """What the journal keeps of these settings: every ``KEPT`` one given, as JSON —
        never a secret. What was given but cannot be kept is named under ``withheld``
        (``api_key``, ``base_url`` holding a password, ``headers:NAME``)."""
        kept: dict[str, Any] = {}
        withheld: list[str] = []
        for name, value in self.given().items():
            keep = FATE[name]
            if keep == ONCE:
                continue
            if keep == SECRET:
                withheld.append(name)
            elif isinstance(value, PriceTable):
                continue  # a table in memory is not kept: its runs' costs are
            elif name == "headers":
                withheld += sorted({f"headers:{header}" for header in header_names(value)})
            elif isinstance(value, str) and redact_url(value) != value:
                withheld.append(name)  # a URL with a password in it
            else:
                kept[name] = _to_json(name, value)
        if withheld:
            kept["withheld"] = withheld
        return kept

    def adopt(self, saved: Mapping[str, Any]) -> list[tuple[str, Any]]:
        """A resumed run: every ``KEPT`` setting not given again takes the value the run
        was started with (one given wins; the journal's fingerprint judges whether it
        changes the run). Returns the settings taken; refuses (``RESUME_MISMATCH``) when
        a withheld one — a key, a header, a URL with a password — is not given again."""
        saved = upgraded(saved)
        hints = typing.get_type_hints(RunSettings)
        taken: list[tuple[str, Any]] = []
        for f in SETTINGS:
            if FATE[f.name] != KEPT or f.name not in saved or _given(self, f):
                continue
            value = _from_json(f.name, hints[f.name], saved[f.name])
            setattr(self, f.name, value)
            taken.append((f.name, value))
        missing = [name for name in saved.get("withheld") or () if not self._holds(name)]
        if missing:
            shown = ", ".join(
                f"the header {n[8:]}" if n.startswith("headers:") else n for n in missing
            )
            raise InvalidInputError(
                f"the run was started with {shown}, whose values are never kept (they may "
                "hold keys)",
                hint="give them again",
                code="RESUME_MISMATCH",
                data={"withheld": missing},
            )
        return taken

    def _holds(self, withheld: str) -> bool:
        name, _, header = withheld.partition(":")
        if name == "headers":
            return header in header_names(self.headers)
        return getattr(self, name, None) is not None

    def changes_from(
        self, fingerprint: Mapping[str, Any], *, ignore: Iterable[str] = ()
    ) -> list[str]:
        """The settings given that differ from a finished run's (``name: was → now``):
        asking for that run again with them would be asking for another run (or, for
        the settings a top-up may change — ``ignore`` them with :data:`GROWABLE` —
        asking for it to grow)."""
        changed = []
        skipped = set(ignore)
        for f in SETTINGS:
            key = f.metadata["compared"]
            if key is None or not _given(self, f) or f.name in skipped:
                continue
            now = _to_json(f.name, getattr(self, f.name))
            if fingerprint.get(key) != now:
                changed.append(f"{f.name}: {fingerprint.get(key)!r} → {now!r}")
        recorded = fingerprint.get("sampling") or {}
        for key, value in self.sampling().items():
            if recorded.get(key) != value:
                changed.append(f"sampling {key}: {recorded.get(key)!r} → {value!r}")
        return changed


SETTINGS = dataclasses.fields(RunSettings)
#: the settings a top-up may change (``run/session/topup.py``): how many attempts, which rows
GROWABLE = frozenset({"n", "limit", "rows", "offset"})
FATE: dict[str, Keep] = {f.name: f.metadata["keep"] for f in SETTINGS}
NAMES = frozenset(FATE)


def _given(settings: RunSettings, f: dataclasses.Field[Any]) -> bool:
    value = getattr(settings, f.name)
    if f.default is not dataclasses.MISSING:
        return bool(value != f.default)
    return bool(value)  # a list or dict: given when not empty


def header_names(headers: Iterable[str]) -> set[str]:
    return {h.split(":", 1)[0].strip() for h in headers}


def _to_json(name: str, value: Any) -> Any:
    if isinstance(value, Path):
        return str(value)
    if name == "rows" and value is not None:
        return rows_text(value)
    return value


def _from_json(name: str, kind: Any, value: Any) -> Any:
    """A kept setting read back, of its field's type — a journal edited by hand, or
    damaged, is one clear error naming the setting (never a crash later)."""
    from pydantic import TypeAdapter, ValidationError

    try:
        if name == "rows":
            return parse_rows(TypeAdapter(str).validate_python(value, strict=True))
        if kind in (Path, Path | None, Path | PriceTable | None):  # a table is never kept
            return Path(TypeAdapter(str).validate_python(value, strict=True))
        return TypeAdapter(kind).validate_python(value, strict=True)
    except (ValidationError, InvalidInputError) as exc:
        raise InvalidInputError(
            f"the run's journal keeps a damaged setting {name}: {json.dumps(value)[:80]}",
            hint="give it again, or start the run afresh",
            code="RESUME_MISMATCH",
            data={"setting": name},
        ) from exc


#: journals written before the settings had one object kept the CLI's option names
_OLD_NAMES = {"max_in_flight": "batch_size", "eval_fn": "eval_fns"}


def upgraded(saved: Mapping[str, Any]) -> dict[str, Any]:
    """A journal's settings in today's names (older journals kept the CLI's options:
    ``sampling_args_json``, ``no_transcripts``, ``rows_spec``, ``--header NAME``…)."""
    out = {_OLD_NAMES.get(k, k): v for k, v in saved.items()}
    if "sampling_args_json" in out:
        text = out.pop("sampling_args_json")
        try:
            out.setdefault("sampling_args", json.loads(text) if isinstance(text, str) else text)
        except ValueError:
            out.setdefault("sampling_args", text)  # refused as damaged when adopted
    if "no_transcripts" in out:
        out.setdefault("transcripts", not out.pop("no_transcripts"))
    if "rows_spec" in out:
        out.setdefault("rows", out.pop("rows_spec"))
    withheld = []
    for item in out.get("withheld") or ():
        text = str(item)
        if text.startswith("--header "):
            withheld.append("headers:" + text.removeprefix("--header "))
        elif text.startswith("--"):
            withheld.append(text.removeprefix("--").replace("-", "_"))
        else:
            withheld.append(text)
    if withheld:
        out["withheld"] = withheld
    return out


__all__ = ["KEPT", "ONCE", "SECRET", "RunSettings", "upgraded"]
