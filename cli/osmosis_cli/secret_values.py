"""The values of a config's ``[secrets]`` (published-cli-0.3.8.md §4.2–4.5).

Per required name, in order: ``--secrets-file`` (``-``: stdin), a non-empty environment
variable, a secret stored on the platform (``eval submit`` only: the platform resolves
it), then — at a terminal — a hidden prompt. Only the names asked for are read from the
file. A value never comes from argv and never appears in output or errors.

- ``eval submit`` sends values found locally as the run's own (they override stored
  ones) and refuses, before submitting, names that are neither stored nor provided.
- local ``eval run`` needs every name locally; the values reach the run through this
  process's environment and are redacted from its output.
- ``eval retry`` re-sends the values the platform asks for (no stored shortcut).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from osmosis_cli.terminal.commands import runnable
from osmosis_client.errors import InvalidInputError

if TYPE_CHECKING:
    from osmosis_cli.terminal.output import Output
    from osmosis_client import Client


#: ``--secrets-file FILE``: the option of every command that submits a config's [secrets]
SecretsFileOpt = Annotated[
    str | None,
    typer.Option(
        "--secrets-file",
        metavar="FILE",
        help="NAME=value lines ('-': stdin) for [secrets]; they override stored secrets.",
    ),
]


@dataclass
class Resolved:
    provided: dict[str, str] = field(default_factory=dict)  # values found here
    source: dict[str, str] = field(default_factory=dict)  # name → file|environment|prompt|stored
    missing: list[str] = field(default_factory=list)


def read_secrets_file(given: str) -> dict[str, str]:
    from osmosis_client.envfile import parse_env_text, read_env_file

    if given == "-":
        return parse_env_text(sys.stdin.read(), "standard input")
    return read_env_file(Path(given).expanduser())


def resolve(
    out: Output,
    names: Sequence[str],
    secrets_file: str | None,
    *,
    stored: Mapping[str, str] | None = None,
) -> Resolved:
    """Find each name's value; ``stored`` (name → scope) counts as found without one."""
    found = Resolved()
    if not names:
        if secrets_file is not None:
            out.note("--secrets-file: the config has no [secrets] names, so nothing is read")
        return found
    from_file = read_secrets_file(secrets_file) if secrets_file is not None else {}
    for name in names:
        if from_file.get(name):
            found.provided[name], found.source[name] = from_file[name], "file"
        elif os.environ.get(name):
            found.provided[name], found.source[name] = os.environ[name], "environment"
        elif stored is not None and name in stored:
            found.source[name] = "stored"
        else:
            found.missing.append(name)
    if found.missing and out.interactive and not out.machine:
        import getpass

        for name in list(found.missing):
            value = getpass.getpass(f"Value for {name} (hidden; Enter to skip): ")
            if value:
                found.provided[name], found.source[name] = value, "prompt"
                found.missing.remove(name)
    return found


def require_local(missing: Sequence[str], *, stored_hint: bool = False) -> None:
    """Every name must have a value here (local runs, retries)."""
    if not missing:
        return
    hint = "export them or pass --secrets-file"
    if stored_hint:
        hint += f", or save them with `osmosis secret set {missing[0]}`"
    raise InvalidInputError(
        f"No value found for: {', '.join(missing)}.",
        hint=hint,
        code="INTERACTIVE_REQUIRED",
        data={"missing": list(missing), "flags": ["--secrets-file"]},
    )


def load_secrets(out: Output, names: Sequence[str], secrets_file: str | None) -> None:
    """A local run's secrets, into this process's environment (the rollout server gets
    exactly the ``[secrets]`` names); a name without a value stops the run."""
    found = resolve(out, names, secrets_file)
    require_local(found.missing)
    for name, value in found.provided.items():
        os.environ[name] = value


def stored_scopes(records: Sequence[tuple[str | None, str | None]]) -> dict[str, str]:
    """name → ``personal``, ``workspace`` or ``personal (overrides workspace)``."""
    scopes: dict[str, set[str]] = {}
    for name, scope in records:
        if name:
            scopes.setdefault(name, set()).add(scope or "personal")
    return {
        name: "personal (overrides workspace)"
        if {"personal", "workspace"} <= found
        else next(iter(sorted(found)))
        for name, found in scopes.items()
    }


def scope_label(found: Resolved, stored: Mapping[str, str], name: str) -> str:
    """How the platform will get ``name`` (the summary table's scope column)."""
    if name in found.provided:
        return f"run (from {found.source[name]})"
    return stored.get(name, "–")


def for_submit(
    client: Client, out: Output, names: Sequence[str], secrets_file: str | None
) -> tuple[Resolved, dict[str, str]]:
    """Resolve ``names`` for a hosted run, stored secrets counting; refuses (before
    anything is submitted) names neither stored nor provided. When the stored secrets
    cannot be listed, values found here are still sent and the platform decides."""
    from osmosis_client.errors import AuthError, OsmosisError

    if not names:
        return resolve(out, names, secrets_file), {}
    try:
        stored = stored_scopes([(s.name, s.scope) for s in client.secrets.all("all")])
    except AuthError:
        raise
    except OsmosisError as exc:
        out.warn(
            f"could not list the stored secrets ({exc.message}); the platform checks [secrets]",
            code="SECRETS_UNCHECKED",
        )
        found = resolve(out, names, secrets_file, stored=dict.fromkeys(names, "–"))
        return found, {}
    found = resolve(out, names, secrets_file, stored=stored)
    if found.missing:
        commands = [runnable("osmosis", "secret", "set", name) for name in found.missing]
        raise InvalidInputError(
            f"Could not find secret(s): {', '.join(found.missing)}",
            hint="store them with "
            + " / ".join(f"`{c}`" for c in commands)
            + ", or pass --secrets-file",
            code="SECRETS_MISSING",
            data={"missing": found.missing, "commands": commands},
        )
    return found, stored
