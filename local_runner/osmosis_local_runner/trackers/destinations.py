"""Where results are sent: parsed and checked before a run starts (a misspelt tracker or
a missing extra must not cost a run)."""

from __future__ import annotations

import importlib.util
import re
from dataclasses import dataclass
from typing import Literal

from osmosis_client._redact import redact_url
from osmosis_client.errors import InvalidInputError

Kind = Literal["mlflow", "wandb", "trackio", "hf"]
#: each destination, the modules it needs and the extra that installs them
KINDS: dict[str, tuple[tuple[str, ...], str]] = {
    "mlflow": (("mlflow",), "mlflow"),
    "wandb": (("wandb",), "wandb"),
    "trackio": (("trackio",), "trackio"),
    "hf": (("huggingface_hub", "pyarrow"), "hub"),
}
#: a Hub repository id: a namespace and a name (the Hub's own rules)
_REPO_ID = re.compile(r"[A-Za-z0-9][\w.-]{0,95}/[A-Za-z0-9][\w.-]{0,95}")


@dataclass(frozen=True)
class Destination:
    """A tracker and its target (a tracking URI, a project; None: the active run or the
    tracker's default)."""

    kind: Kind
    target: str | None = None
    public: bool = False  # a Hub repository made public (else private)

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
    """``mlflow[:URI]``, ``wandb[:[ENTITY/]PROJECT]``, ``trackio[:PROJECT]``,
    ``hf:ORG/NAME`` (a Hub dataset repository)."""
    kind, sep, target = text.strip().partition(":")
    if kind not in KINDS:
        raise InvalidInputError(
            f"unknown tracker {kind!r} in {text!r}",
            hint="use mlflow[:URI], wandb[:PROJECT], trackio[:PROJECT] or hf:ORG/NAME",
            code="USAGE",
        )
    if kind == "hf" and not _repo_id(target):
        raise InvalidInputError(
            f"{text!r} names no Hub dataset repository",
            hint="write hf:ORG/NAME (letters, digits, '-', '_', '.'; no '--' or '..')",
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


def _repo_id(text: str) -> bool:
    return (
        bool(_REPO_ID.fullmatch(text))
        and "--" not in text
        and ".." not in text
        and (not text.endswith(".git"))
    )


def _project_name(text: str) -> bool:
    parts = text.split("/")
    return 1 <= len(parts) <= 2 and all(
        part and len(part) <= 128 and all(c.isalnum() or c in "-_." for c in part) for part in parts
    )


def check_available(destinations: list[Destination]) -> None:
    """Each tracker's package importable (an extra), said before the run starts."""
    for destination in destinations:
        modules, extra = KINDS[destination.kind]
        for module in modules:
            if importlib.util.find_spec(module) is None:
                raise InvalidInputError(
                    f"{destination.kind} needs the {module} package",
                    hint=f"pip install 'osmosis-client[{extra}]'",
                    code="USAGE",
                )
