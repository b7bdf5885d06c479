"""Exceptions → exit codes and one line on stderr: the one place (cli.md's table)."""

from __future__ import annotations

import functools
import logging
import traceback
from collections.abc import Callable
from typing import Any, TypeVar

import typer

from osmosis_cli.terminal.output import Output
from osmosis_client.errors import (
    AuthError,
    BadRequestError,
    InvalidInputError,
    OsmosisError,
)

#: the SDK's logger of one line per model call (osmosis_client.llm.client): shown at -vv
REQUESTS_LOGGER = "osmosis_client.requests"

F = TypeVar("F", bound=Callable[..., Any])

EXIT_OK = 0
EXIT_FAILED = 1
EXIT_INVALID = 2
EXIT_AUTH = 3
EXIT_NOT_PASSED = 4
EXIT_INTERRUPTED = 130


class EvaluationNotPassed(OsmosisError):
    """A verdict, not an error: the waited-on run failed or scored below the gate."""

    code = "NOT_PASSED"


def exit_code_for(exc: BaseException) -> int:
    if isinstance(exc, KeyboardInterrupt):
        return EXIT_INTERRUPTED
    if isinstance(exc, EvaluationNotPassed):
        return EXIT_NOT_PASSED
    if isinstance(exc, AuthError):
        return EXIT_AUTH
    if isinstance(exc, InvalidInputError | BadRequestError):
        return EXIT_INVALID
    return EXIT_FAILED


def current_output() -> Output:
    """The Output of the running command (set by :func:`handle_errors`)."""
    return _current[-1] if _current else Output()


_current: list[Output] = []


def handle_errors(fn: F) -> F:
    """Wrap a command: build its Output, render any error as one line, exit with its code.

    The root's ``--json`` / ``--plain`` select the output (a JSON command that ends
    without its document is an ``INTERNAL`` error, never a silent success); the root's
    ``-v`` turns on debug logs and tracebacks.
    """

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        # a command is called with keywords (typer), or as run(ctx, options)
        ctx = kwargs.get("ctx", args[0] if args else None)
        find_root = getattr(ctx, "find_root", None)
        root = find_root() if callable(find_root) else None
        level = int(getattr(root.obj, "verbose", 0) or 0) if root is not None else 0
        verbose = level > 0
        mode = getattr(getattr(root, "obj", None), "output", "rich")
        command = getattr(ctx, "command_path", None) or "osmosis"
        out = Output(
            json_mode=mode == "json", plain=mode == "plain", verbose=verbose, command=command
        )
        out.argv = list(getattr(getattr(root, "obj", None), "argv", None) or [])
        _current.append(out)
        handler = _StderrHandler(out)
        log = logging.getLogger("osmosis_client")
        previous_level = log.level
        log.addHandler(handler)
        log.setLevel(logging.DEBUG if verbose else logging.INFO)
        calls = logging.getLogger(REQUESTS_LOGGER)  # a line per model call: -vv only
        previous_calls = calls.level
        calls.setLevel(logging.DEBUG if level > 1 else logging.INFO)
        try:
            result = fn(*args, **kwargs)
            if out.json_mode and not out.emitted:
                out.error(OsmosisError("the command ended without its result", code="INTERNAL"))
                raise typer.Exit(EXIT_FAILED)
            return result
        except OsmosisError as exc:
            if verbose:
                traceback.print_exc()
            out.error(exc)
            raise typer.Exit(exit_code_for(exc)) from exc
        except KeyboardInterrupt as exc:
            out.stderr.write("interrupted\n")
            raise typer.Exit(EXIT_INTERRUPTED) from exc
        finally:
            log.removeHandler(handler)
            log.setLevel(previous_level)
            calls.setLevel(previous_calls)
            _current.pop()

    return wrapper  # type: ignore[return-value]


class _StderrHandler(logging.Handler):
    """SDK log records → ``warning: …`` on stderr (debug lines only with ``-v``)."""

    def __init__(self, out: Output) -> None:
        super().__init__()
        self.out = out

    def emit(self, record: logging.LogRecord) -> None:
        from osmosis_client._redact import redact_urls_in

        message = record.getMessage()
        if record.levelno >= logging.WARNING:
            self.out.warn(message)
        elif self.out.verbose:
            self.out.line(f"debug: {redact_urls_in(message)}")


def command(app: typer.Typer, name: str) -> Callable[[F], F]:
    """``@command(app, "list")``: a command of ``app`` (our Command class) whose errors
    :func:`handle_errors` renders — the two decorators every command wore."""
    from osmosis_cli.terminal.declare import Command

    def register(fn: F) -> F:
        app.command(name, cls=Command)(handle_errors(fn))
        return fn

    return register
