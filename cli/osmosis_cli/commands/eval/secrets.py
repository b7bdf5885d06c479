"""``--secrets-file``: the values of a config's ``[secrets]`` for a local run.

Per required name: the file (``-``: stdin), then a non-empty environment variable,
then — at a terminal — a hidden prompt. Only the names the config asks for are read
from the file; their values reach the run through this process's environment (the
rollout server gets exactly the ``[secrets]`` names) and are redacted from its output.
A value never comes from argv.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from osmosis_cli.terminal.output import Output


def read_secrets_file(given: str) -> dict[str, str]:
    from osmosis_client.envfile import parse_env_text, read_env_file

    if given == "-":
        return parse_env_text(sys.stdin.read(), "standard input")
    return read_env_file(Path(given).expanduser())


def load_secrets(out: Output, names: Sequence[str], secrets_file: str | None) -> list[str]:
    """Put the config's secrets into the environment; returns the names still missing."""
    if not names:
        if secrets_file is not None:
            out.note("--secrets-file: the config has no [secrets] names, so nothing is read")
        return []
    values = read_secrets_file(secrets_file) if secrets_file is not None else {}
    for name in names:
        if values.get(name):
            os.environ[name] = values[name]  # the file beats the environment, as published
    missing = [name for name in names if not os.environ.get(name)]
    if missing and out.interactive and not out.machine:
        import getpass

        for name in list(missing):
            value = getpass.getpass(f"Value for {name} (hidden; Enter to skip): ")
            if value:
                os.environ[name] = value
                missing.remove(name)
    return missing
