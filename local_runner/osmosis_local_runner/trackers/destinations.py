"""Where results are sent: parsed and checked before a run starts (a misspelt tracker or
a missing extra must not cost a run)."""

from __future__ import annotations

import importlib.util
from dataclasses import dataclass
from typing import Literal

from osmosis_client._redact import redact_url
from osmosis_client.errors import InvalidInputError

Kind = Literal["mlflow", "wandb", "trackio"]
#: each tracker, the module it needs and the extra that installs it
KINDS: dict[str, tuple[str, str]] = {
    "mlflow": ("mlflow", "mlflow"),
    "wandb": ("wandb", "wandb"),
    "trackio": ("trackio", "trackio"),
}


@dataclass(frozen=True)
class Destination:
    """A tracker and its target (a tracking URI, a project; None: the active run or the
    tracker's default)."""

    kind: Kind
    target: str | None = None

    def __str__(self) -> str:
        """As given, credentials in a URI masked (what records and output show)."""
        if self.target is None:
            return self.kind
        return f"{self.kind}:{redact_url(self.target) if self.kind == 'mlflow' else self.target}"

    @property
    def key(self) -> str:
        """What the record is kept under (the target as given, masked)."""
        return str(self)


def parse_destination(text: str) -> Destination:
    """``mlflow[:URI]``, ``wandb[:[ENTITY/]PROJECT]``, ``trackio[:PROJECT]``."""
    kind, sep, target = text.strip().partition(":")
    if kind not in KINDS:
        raise InvalidInputError(
            f"unknown tracker {kind!r} in {text!r}",
            hint="use mlflow[:URI], wandb[:PROJECT] or trackio[:PROJECT]",
            code="USAGE",
        )
    if sep and not target.strip():
        raise InvalidInputError(
            f"{text!r} names no target after the colon",
            hint=f"write {kind} alone (the active run, or the default) or {kind}:TARGET",
            code="USAGE",
        )
    if kind != "mlflow" and target and not _project_name(target):
        raise InvalidInputError(
            f"{target!r} is not a {kind} project name",
            hint="letters, digits, '-', '_', '.', with one optional ENTITY/ before it",
            code="USAGE",
        )
    return Destination(kind, target.strip() or None)  # type: ignore[arg-type]


def _project_name(text: str) -> bool:
    parts = text.split("/")
    return 1 <= len(parts) <= 2 and all(
        part and len(part) <= 128 and all(c.isalnum() or c in "-_." for c in part)
        for part in parts
    )


def check_available(destinations: list[Destination]) -> None:
    """Each tracker's package importable (an extra), said before the run starts."""
    for destination in destinations:
        module, extra = KINDS[destination.kind]
        if importlib.util.find_spec(module) is None:
            raise InvalidInputError(
                f"--log-to {destination.kind} needs the {module} package",
                hint=f"pip install 'osmosis-client[{extra}]'",
                code="USAGE",
            )
