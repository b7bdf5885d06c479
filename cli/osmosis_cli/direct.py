"""Calling a command without a command line — gh's ``runF`` seam.

Every command is a plain function: ``run(ctx, options)`` for those declared with an
options object (:func:`~osmosis_cli.terminal.declare.options_command`), keywords for the
rest. :func:`call` gives it the context the root command would (output mode, workspace,
platform URL) and captures what it writes, so a test drives a command's behaviour
without parsing argv; a test of the parsing alone builds the command with a recording
``run`` instead (``options_command(Options, recorder)``).
"""

from __future__ import annotations

import contextlib
import io
import json
import sys
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import typer

from osmosis_cli.context import AppState


@dataclass
class Outcome:
    """What a direct call did: its exit code and the text it wrote."""

    exit_code: int
    stdout: str
    stderr: str

    def document(self) -> dict[str, Any]:
        """The ``--json`` document on stdout."""
        found = json.loads(self.stdout)
        assert isinstance(found, dict)
        return found


@dataclass
class _Root:
    """The part of a click context a command reads: the root's state and its path."""

    obj: AppState
    command_path: str

    def find_root(self) -> _Root:
        return self


def call(
    command: Callable[..., Any],
    *args: Any,
    output: str = "rich",
    workspace: str | None = None,
    platform_url: str | None = None,
    stdin: str = "",
    name: str = "osmosis",
    **kwargs: Any,
) -> Outcome:
    """Run ``command(ctx, *args, **kwargs)`` as ``osmosis [--json|--plain] …`` would."""
    state = AppState(platform_url_option=platform_url, workspace_option=workspace, output=output)
    stdout, stderr = io.StringIO(), io.StringIO()
    code = 0
    with (
        contextlib.redirect_stdout(stdout),
        contextlib.redirect_stderr(stderr),
        _stdin(stdin),
    ):
        try:
            command(_Root(state, name), *args, **kwargs)
        except typer.Exit as exc:
            code = exc.exit_code
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else 1
    return Outcome(code, stdout.getvalue(), stderr.getvalue())


@contextlib.contextmanager
def _stdin(text: str) -> Any:
    previous = sys.stdin
    sys.stdin = io.StringIO(text)
    try:
        yield
    finally:
        sys.stdin = previous


__all__ = ["Outcome", "call"]
