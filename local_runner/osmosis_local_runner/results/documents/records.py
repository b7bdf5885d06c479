"""One attempt as a record: what the journal appends and the results document holds
per run (scores, error, answer, transcript…), and the strict JSON both are written in."""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from osmosis_client import _json

#: the run's own model in the document of a --baseline-model run (0.2's tag; None in memory)
PRIMARY = "primary"
#: the attempts of --baseline-model
BASELINE = "baseline"

#: compact JSON text, as records, journal lines and documents are written (a non-finite
#: float is written as null; what JSON cannot hold raises ``TypeError`` / ``ValueError``)
compact = _json.compact


@dataclass(slots=True)
class AttemptRecord:
    """The outcome of one attempt (also the journal line).

    The final conversation is kept as compact JSON text (``transcript``) and spliced
    into the journal line and the results document unparsed: a 100 k-row run keeps
    one short string per attempt instead of a tree of dicts.
    """

    row_index: int
    run_index: int
    row_digest: str
    success: bool
    scores: dict[str, float]
    #: wall time in milliseconds, to the microsecond (a mock attempt takes well under one)
    duration_ms: float
    tokens: int
    error: str | None
    #: eval fn name → what it raised (that fn scored 0; the others kept their scores)
    fn_errors: dict[str, str] | None = None
    #: the text of the last assistant message
    answer: str | None = None
    #: further small per-run keys of the results document (rollout_id, retries, …)
    extra: dict[str, Any] | None = None
    #: the final messages as compact JSON text (None with --no-transcripts)
    transcript: str | None = None
    #: None for the run's model; "baseline" for --baseline-model attempts
    model_tag: str | None = None
    #: the rollout dropped its sample (``remove_sample``): kept, but in no statistic
    skipped: bool = False
    #: the row as the results keep it — ``{"prompt", "expected", "metadata"}`` as compact
    #: JSON text, one string shared by the row's attempts (None: not known)
    row_facts: str | None = None
    #: tokens by kind, finish reason, truncation and cost (results/statistics/usage.py;
    #: None: no call)
    usage: dict[str, Any] | None = None

    @property
    def key(self) -> tuple[int, int, str | None]:
        return self.row_index, self.run_index, self.model_tag

    def _fields(self, *, tag_primary: bool = False) -> dict[str, Any]:
        data: dict[str, Any] = {
            "run_index": self.run_index,
            "success": self.success,
            "scores": self.scores,
            "duration_ms": self.duration_ms,
            "tokens": self.tokens,
            "error": self.error,
        }
        if self.usage is not None:
            data["usage"] = self.usage
        if self.fn_errors:
            data["fn_errors"] = self.fn_errors
        if self.answer is not None:
            data["answer"] = self.answer
        if self.model_tag is not None:
            data["model_tag"] = self.model_tag
        elif tag_primary:
            data["model_tag"] = PRIMARY
        if self.skipped:
            data["skipped"] = True
        if self.extra:
            data.update(self.extra)
        return data

    def messages(self) -> list[Any] | None:
        """The final conversation (parsed from the transcript), or None."""
        if self.transcript is None:
            return None
        value = json.loads(self.transcript)
        return value if isinstance(value, list) else None

    def run_json(self, *, tag_primary: bool = False) -> dict[str, Any]:
        """The attempt as a run of the results document (the transcript parsed);
        ``tag_primary``: a run with a baseline model marks its own attempts ``primary``."""
        data = self._fields(tag_primary=tag_primary)
        if self.transcript is not None:
            data["messages"] = json.loads(self.transcript)
        return data

    def run_text(self, *, tag_primary: bool = False) -> str:
        """The same run as JSON text, the transcript spliced in unparsed."""
        return _splice(compact(self._fields(tag_primary=tag_primary)), self.transcript)

    def journal_line(self) -> str:
        head = {
            "row_index": self.row_index,
            "row_digest": self.row_digest,
            **self._fields(),
        }
        text = _splice(compact(head), self.transcript)
        return text if self.row_facts is None else f'{text[:-1]},"row":{self.row_facts}}}'

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> AttemptRecord:
        """A record from a journal line (or a results document's run plus its row)."""
        known = {
            "row_index",
            "row_digest",
            "run_index",
            "success",
            "scores",
            "duration_ms",
            "tokens",
            "error",
            "fn_errors",
            "answer",
            "messages",
            "model_tag",
            "skipped",
            "row",
            "usage",
        }
        messages = data.get("messages")
        facts = data.get("row")
        record = cls(
            row_index=data["row_index"],
            run_index=data["run_index"],
            row_digest=data.get("row_digest", ""),
            success=data["success"],
            scores=data["scores"],
            duration_ms=data.get("duration_ms", 0),
            tokens=data.get("tokens", 0),
            error=data.get("error"),
            fn_errors=data.get("fn_errors") or None,
            answer=data.get("answer"),
            extra={k: v for k, v in data.items() if k not in known} or None,
            transcript=compact(messages) if isinstance(messages, list) else None,
            model_tag=None if data.get("model_tag") == PRIMARY else data.get("model_tag"),
            skipped=data.get("skipped") is True,
            row_facts=facts_text(facts) if isinstance(facts, dict) else None,
            usage=data["usage"] if isinstance(data.get("usage"), dict) else None,
        )
        if not isinstance(record.row_index, int) or not isinstance(record.run_index, int):
            raise TypeError("row_index and run_index must be integers")
        if not isinstance(record.scores, dict) or not isinstance(record.success, bool):
            raise TypeError("scores must be an object and success a boolean")
        return record


FACT_KEYS = ("prompt", "expected", "metadata")


def facts_text(facts: Mapping[str, Any]) -> str | None:
    """:func:`row_facts` as compact JSON text; None when nothing is known."""
    kept = row_facts(facts)
    return compact(kept) if kept else None


def row_facts(facts: Mapping[str, Any]) -> dict[str, Any]:
    """``{prompt, expected, metadata}`` from whatever a journal line or a document row
    holds (other keys dropped; a value JSON cannot hold becomes text)."""
    kept: dict[str, Any] = {}
    for key in FACT_KEYS:
        value = facts.get(key)
        if key == "metadata":
            if isinstance(value, Mapping) and value:
                kept[key] = {str(k): _plain(v) for k, v in value.items()}
        elif value is not None:
            kept[key] = value if isinstance(value, str) else str(_plain(value))
    return kept


def _plain(value: Any) -> Any:
    """``value`` if strict JSON holds it, else its text (a timestamp, NaN, bytes…)."""
    if value is None or isinstance(value, str | bool | int):
        return value  # the common columns: nothing to check
    if isinstance(value, float):
        return value if math.isfinite(value) else str(value)
    try:
        compact(value)
    except (TypeError, ValueError, RecursionError):
        return str(value)
    return value


def _splice(text: str, transcript: str | None) -> str:
    """``{…}`` + ``"messages": <transcript>`` → one JSON object, without re-encoding."""
    if transcript is None:
        return text
    return f'{text[:-1]},"messages":{transcript}}}'
