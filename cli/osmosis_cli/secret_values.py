"""The values of a config's ``[secrets]`` at a terminal (published-cli-0.3.8.md
§4.2–4.5): the SDK's :func:`~osmosis_client.secret_values.resolve_secrets` with a hidden
prompt as its ``ask``, and what a submit shows of them.

Per required name, in order: ``--secrets-file`` (``-``: stdin), a non-empty environment
variable, a secret stored on the platform (``eval submit`` only: the platform resolves
it), then — at a terminal — a hidden prompt. Only the names asked for are read from the
file. A value never comes from argv and never appears in output or errors.

- ``eval submit`` sends values found locally as the run's own (they override stored
  ones) and refuses, before submitting, names that are neither stored nor provided.
- local ``eval run`` needs every name locally; the values reach the run in its request
  (``RunRequest.secrets``) and are redacted from its output.
- ``eval retry`` re-sends the values the platform asks for (no stored shortcut).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Annotated

from osmosis_cli.terminal.commands import runnable
from osmosis_cli.terminal.declare import option
from osmosis_client.errors import InvalidInputError

if TYPE_CHECKING:
    from osmosis_cli.terminal.output import Output
    from osmosis_client import Client
    from osmosis_client.secret_values import SecretValues


#: ``--secrets-file FILE``: the option of every command that submits a config's [secrets]
SecretsFileOpt = Annotated[
    str | None,
    option(
        "--secrets-file FILE",
        "NAME=value lines ('-': stdin) for [secrets]; they override stored secrets.",
    ),
]


def resolve(
    out: Output,
    names: Sequence[str],
    secrets_file: str | None,
    *,
    stored: Mapping[str, str] | None = None,
) -> SecretValues:
    """Find each name's value (the SDK's order), asking at a terminal for what is left;
    ``stored`` (name → scope) counts as found without one."""
    from osmosis_client.secret_values import resolve_secrets

    if not names and secrets_file is not None:
        out.note("--secrets-file: the config has no [secrets] names, so nothing is read")
    ask = _prompt if out.interactive and not out.machine else None
    return resolve_secrets(names, file=secrets_file, stored=stored, ask=ask)


def _prompt(name: str) -> str:
    import getpass

    return getpass.getpass(f"Value for {name} (hidden; Enter to skip): ")


def local_secrets(out: Output, names: Sequence[str], secrets_file: str | None) -> dict[str, str]:
    """A local run's secrets, every name with a value (the run's request carries them to
    the rollout server, which gets exactly the ``[secrets]`` names)."""
    return resolve(out, names, secrets_file).require()


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


def scope_label(found: SecretValues, stored: Mapping[str, str], name: str) -> str:
    """How the platform will get ``name`` (the summary table's scope column)."""
    if name in found.provided:
        return f"run (from {found.source[name]})"
    return stored.get(name, "–")


def for_submit(
    client: Client, out: Output, names: Sequence[str], secrets_file: str | None
) -> tuple[SecretValues, dict[str, str]]:
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
