"""The values of a config's ``[secrets]``, resolved once for every caller
(published-cli-0.3.8.md §4.2–4.5): the CLI's submits, retries and local runs, and
``run_eval``.

Per required name, in order: a secrets file (``NAME=value`` lines; only the names asked
for are read from it), a non-empty environment variable, a secret stored on the platform
(``stored``: the platform resolves it, no value here), then ``ask`` — the caller's way to
ask a person (the CLI's hidden prompt; a library caller gives none). A value never comes
from argv and is never part of an error: the values travel in the request that needs
them (a run's ``secrets``, a submit's run-scoped values), not through this process's
environment.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from osmosis_client.errors import InvalidInputError

#: how a value was found: "file", "environment", "prompt" (``ask``) or "stored"
Source = str


@dataclass
class SecretValues:
    """What was found for each required name: the values here (``provided``), where each
    came from (``source``; a stored one has a source and no value) and what is
    ``missing``."""

    provided: dict[str, str] = field(default_factory=dict)
    source: dict[str, Source] = field(default_factory=dict)
    missing: list[str] = field(default_factory=list)

    def require(self) -> dict[str, str]:
        """The values, every name having one (a local run, a retry): a missing name is
        ``INTERACTIVE_REQUIRED``, naming them (never a value)."""
        if not self.missing:
            return dict(self.provided)
        raise InvalidInputError(
            f"No value found for: {', '.join(self.missing)}.",
            hint="export them, or give their values in a secrets file",
            code="INTERACTIVE_REQUIRED",
            data={"missing": list(self.missing), "flags": ["--secrets-file"]},
        )


def read_secrets_file(given: str | Path) -> dict[str, str]:
    """``NAME=value`` lines from a file, or standard input for ``-``."""
    from osmosis_client.envfile import parse_env_text, read_env_file

    if str(given) == "-":
        return parse_env_text(sys.stdin.read(), "standard input")
    return read_env_file(Path(given).expanduser())


def resolve_secrets(
    names: Sequence[str],
    *,
    file: str | Path | None = None,
    environ: Mapping[str, str] | None = None,
    stored: Mapping[str, str] | None = None,
    ask: Callable[[str], str | None] | None = None,
) -> SecretValues:
    """Find each of ``names``' values (see the module's order). ``environ``: where
    exported values are read (default: this process's environment); ``stored`` (name →
    scope) counts as found without a value; ``ask(name)`` is called for each name still
    missing, its empty answer a skip. The file is read only when a name is asked for."""
    found = SecretValues()
    if not names:
        return found
    environ = os.environ if environ is None else environ
    from_file = read_secrets_file(file) if file is not None else {}
    for name in names:
        if from_file.get(name):
            found.provided[name], found.source[name] = from_file[name], "file"
        elif environ.get(name):
            found.provided[name], found.source[name] = environ[name], "environment"
        elif stored is not None and name in stored:
            found.source[name] = "stored"
        else:
            found.missing.append(name)
    if ask is not None:
        for name in list(found.missing):
            value = ask(name)
            if value:
                found.provided[name], found.source[name] = value, "prompt"
                found.missing.remove(name)
    return found


__all__ = ["SecretValues", "read_secrets_file", "resolve_secrets"]
