"""The root options, read before typer parses (help and usage errors stay cheap):

- ``--json`` / ``--plain`` anywhere on the line (before a literal ``--``), and ``-v`` /
  ``--verbose`` too (after ``validate``, its own ``-v``);
- before the command: ``--platform URL`` (``--platform-url`` is its alias),
  ``--workspace NAME``, ``--env-file PATH``; ``-V`` is ``--version``.

Then the environment file: ``--env-file``, else ``$OSMOSIS_ENV_FILE``, else the nearest
``.env`` from the current directory up to the top of its git checkout (never above it:
an unrelated ``.env`` in a parent directory is not read). Its values never override the
process environment, and a login variable the two define differently is refused.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, MutableMapping
from pathlib import Path

from osmosis_cli.context import AppState

VALUE_OPTIONS = {
    "--platform": "platform",
    "--platform-url": "platform",
    "--workspace": "workspace",
    "--env-file": "env_file",
}
OUTPUT_FLAGS = {"--json": "json", "--plain": "plain"}
VERBOSE_FLAGS = {"-v": 1, "--verbose": 1, "-vv": 2}  # -vv: every model call too
#: commands with a -v of their own (0.2's `validate -v`: a longer report)
OWN_VERBOSE = ("validate",)
#: variables that decide who you are and where: a .env may not silently disagree
LOGIN_VARIABLES = (
    "OSMOSIS_PLATFORM_URL",
    "OSMOSIS_TOKEN",
    "OSMOSIS_TOKEN_PLATFORM_URL",
    "OSMOSIS_WORKSPACE",
)


class UsageError(Exception):
    """A bad root option: one ``error:`` line, exit 2 (click's shape, for main)."""

    exit_code = 2

    def format_message(self) -> str:
        return str(self)


def parse(argv: list[str]) -> tuple[list[str], AppState, str | None]:
    """(the arguments typer parses, the state, the ``--env-file`` value or None)."""
    state = AppState()
    modes: set[str] = set()
    hoisted: list[str] = []
    command = _command_of(argv)
    seen_command = False
    for i, arg in enumerate(argv):
        if arg == "--":
            hoisted.extend(argv[i:])
            break
        seen_command = seen_command or arg == command
        if arg in OUTPUT_FLAGS:
            modes.add(OUTPUT_FLAGS[arg])
        elif arg in VERBOSE_FLAGS and not (seen_command and command in OWN_VERBOSE):
            # counted here (-v, -vv, repeated), anywhere but after a command with its own
            # -v: typer would coerce a counting option through pydantic at start-up
            state.verbose += VERBOSE_FLAGS[arg]
        else:
            hoisted.append(arg)
    if len(modes) > 1:
        raise UsageError("--json and --plain cannot be used together")
    if modes:
        state.output = modes.pop()
    rest, values = _leading_options(hoisted)
    if "platform" in values:
        state.platform_url_option = values["platform"]
    if "workspace" in values:
        workspace = values["workspace"].strip()
        if not workspace:
            raise UsageError("--workspace requires a non-empty name")
        state.workspace_option = workspace
    return rest, state, values.get("env_file")


def _command_of(argv: list[str]) -> str | None:
    """The command word (the first argument that is no root option), or None."""
    i = 0
    while i < len(argv):
        arg = argv[i]
        if arg == "--":
            return None
        if not arg.startswith("-"):
            return arg
        i += 2 if arg in VALUE_OPTIONS else 1
    return None


def _leading_options(argv: list[str]) -> tuple[list[str], dict[str, str]]:
    values: dict[str, str] = {}
    rest: list[str] = []
    i = 0
    while i < len(argv):
        arg = argv[i]
        if not arg.startswith("-") or arg == "--":
            rest.extend(argv[i:])
            break
        name, eq, inline = arg.partition("=")
        if name in VALUE_OPTIONS:
            if eq:
                values[VALUE_OPTIONS[name]] = inline
                i += 1
                continue
            if i + 1 >= len(argv):
                raise UsageError(f"option {name} requires a value")
            values[VALUE_OPTIONS[name]] = argv[i + 1]
            i += 2
            continue
        rest.append("--version" if arg == "-V" else arg)
        i += 1
    return rest, values


def load_env_file(
    option: str | None,
    environ: MutableMapping[str, str] | None = None,
    cwd: Path | None = None,
) -> Path | None:
    """Load the environment file into ``environ`` (``os.environ``); the file used."""
    from osmosis_client.envfile import read_env_file

    environ = os.environ if environ is None else environ
    path = _env_file_path(option, environ, cwd or Path.cwd())
    if path is None:
        return None
    values = read_env_file(path)
    _check_login_variables(values, environ, path)
    for name, value in values.items():
        environ.setdefault(name, value)
    return path


def _env_file_path(option: str | None, environ: Mapping[str, str], cwd: Path) -> Path | None:
    named = option if option is not None else environ.get("OSMOSIS_ENV_FILE") or None
    if named is not None:
        path = Path(named).expanduser()
        if not path.is_file():
            source = "--env-file" if option is not None else "OSMOSIS_ENV_FILE"
            raise UsageError(f"{source}: file {named!r} does not exist")
        return path
    chain = (cwd, *cwd.parents)
    top = next((i for i, d in enumerate(chain) if (d / ".git").exists()), 0)
    for directory in chain[: top + 1]:  # up to the checkout's top; outside one, cwd only
        candidate = directory / ".env"
        if candidate.is_file():
            return candidate
    return None


def _check_login_variables(
    values: Mapping[str, str], environ: MutableMapping[str, str], path: Path
) -> None:
    from osmosis_client.errors import InvalidInputError

    for name in LOGIN_VARIABLES:
        if environ.get(name) == "":
            del environ[name]  # an empty variable means unset, as published
        if name in values and name in environ and environ[name] != values[name]:
            raise InvalidInputError(
                f"{name} is set in the environment and differently in {path}",
                hint=f"unset {name}, or remove it from {path.name}",
                code="CONFLICT",
                data={"variable": name, "file": str(path)},
            )
