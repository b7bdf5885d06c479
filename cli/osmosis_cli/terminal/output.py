"""The one output policy: TTY, colour, ``NO_COLOR``, ``--json``, ``--plain``, prompts.

Humans get rich tables on stdout and messages on stderr; with ``--json`` stdout
carries exactly one JSON document (an envelope of :mod:`.envelope`) and stderr only
JSON lines of ours; ``--plain`` prints tab-separated rows without a header. ``rich`` is
imported only when a human-readable table or progress display is actually drawn.
"""

from __future__ import annotations

import contextlib
import json
import os
import sys
from collections.abc import Iterable, Iterator, Sequence
from functools import cached_property
from typing import IO, TYPE_CHECKING, Any

from osmosis_cli.terminal.machine import ResultWriter
from osmosis_client._redact import safe_json, safe_text
from osmosis_client.errors import InvalidInputError, OsmosisError

if TYPE_CHECKING:
    from rich.console import Console


class ConfirmationRequired(InvalidInputError):
    code = "CONFIRMATION_REQUIRED"


class Output(ResultWriter):
    """Where and how a command writes. Tests pass ``StringIO`` streams."""

    def __init__(
        self,
        *,
        json_mode: bool = False,
        plain: bool = False,
        stdout: IO[str] | None = None,
        stderr: IO[str] | None = None,
        stdin: IO[str] | None = None,
        verbose: bool = False,
        command: str = "osmosis",
    ) -> None:
        self.json_mode = json_mode
        #: --plain: results as tab-separated rows (no header), `Label: value` lines
        self.plain = plain and not json_mode
        self.command = command
        #: the command line as typed (after ``osmosis``), for suggested re-runs
        self.argv: list[str] = []
        #: whether the command's result was written (a --json command must write one)
        self.emitted = False
        self.stdout = stdout or sys.stdout
        self.stderr = stderr or sys.stderr
        self.stdin = stdin or sys.stdin
        self.verbose = verbose
        #: while a live display owns the terminal, stderr lines are printed through it
        self.above: Any = None

    @staticmethod
    def _isatty(stream: IO[str]) -> bool:
        try:
            return stream.isatty()
        except (AttributeError, ValueError):
            return False

    @property
    def stdout_is_tty(self) -> bool:
        return self._isatty(self.stdout)

    @property
    def stderr_is_tty(self) -> bool:
        return self._isatty(self.stderr)

    @property
    def stdin_is_tty(self) -> bool:
        return self._isatty(self.stdin)

    @property
    def interactive(self) -> bool:
        """A person can answer a prompt: human output, stdin and stderr terminals
        (``--json`` / ``--plain`` never prompt, as published: a script reads them)."""
        return not self.json_mode and not self.plain and self.stdin_is_tty and self.stderr_is_tty

    @property
    def color(self) -> bool:
        return "NO_COLOR" not in os.environ and self.stdout_is_tty

    @cached_property
    def console(self) -> Console:
        from rich.console import Console

        return Console(  # text from users, models and the platform is never markup
            file=self.stdout,
            no_color=not self.color,
            highlight=False,
            markup=False,
            emoji=False,
            force_terminal=self.stdout_is_tty,
            soft_wrap=not self.stdout_is_tty,
        )

    @cached_property
    def err_console(self) -> Console:
        from rich.console import Console

        color = "NO_COLOR" not in os.environ and self.stderr_is_tty
        return Console(
            file=self.stderr,
            no_color=not color,
            highlight=False,
            markup=False,
            emoji=False,
            force_terminal=self.stderr_is_tty,
        )

    # ------------------------------------------------------------- writing

    @contextlib.contextmanager
    def user_output_to_stderr(self) -> Iterator[None]:
        """With ``--json``, stdout carries one document: while user code may run, what
        it prints (``print``, and writes to file descriptor 1) goes to stderr."""
        if not self.json_mode:
            yield
            return
        saved = None
        try:
            real = sys.stdout.fileno() == 1
        except (AttributeError, ValueError, OSError):
            real = False  # not a real stream (tests): print() is caught below
        if real:
            sys.stdout.flush()
            saved = os.dup(1)
            os.dup2(2, 1)
        try:
            with contextlib.redirect_stdout(sys.stderr):
                yield
        finally:
            with contextlib.suppress(OSError, ValueError):
                sys.stderr.flush()
            if saved is not None:
                with contextlib.suppress(OSError, ValueError):
                    sys.stdout.flush()
                os.dup2(saved, 1)
                os.close(saved)

    def print(self, text: str = "") -> None:
        """A human line on stdout (ignored with ``--json``)."""
        if self.json_mode:
            return
        self.stdout.write(safe_text(text) + "\n")
        self.stdout.flush()

    def info(self, text: str) -> None:
        """A status message on stderr (suppressed with ``--json``)."""
        if self.json_mode:
            return
        self.line(text)

    def line(self, text: str) -> None:
        """A line on stderr in every mode, above a live progress bar if one is shown."""
        text = safe_text(text)  # may hold what a server or user code sent
        if self.above is not None:
            self.above(text)
            return
        self.stderr.write(text + "\n")
        self.stderr.flush()

    def note(self, text: str) -> None:
        """A one-off notice on stderr, printed in every mode (stdout stays clean)."""
        if self.json_mode:
            self._json_line(_warning(safe_text(text), "NOTE"))
            return
        self.stderr.write(f"note: {safe_text(text)}\n")
        self.stderr.flush()

    def warn(self, text: str, code: str | None = None) -> None:
        if self.json_mode:
            self._json_line(_warning(safe_text(text), code))
            return
        self.stderr.write(f"warning: {safe_text(text)}\n")
        self.stderr.flush()

    def _json_line(self, document: dict[str, Any]) -> None:
        self.stderr.write(safe_json(json.dumps(document, ensure_ascii=False, default=str)) + "\n")
        self.stderr.flush()

    def error(self, exc: OsmosisError) -> None:
        from osmosis_cli.terminal.hints import hint_for

        hint = hint_for(exc, self.command)
        if self.json_mode:
            from osmosis_cli.terminal.envelope import error_document

            self._json_line(error_document(self.command, exc, hint))
        else:
            line = f"error: {exc.message}"
            if hint:
                line += f" — {hint}"
            self.stderr.write(safe_text(line) + "\n")
            for problem in getattr(exc, "problems", ()) or getattr(exc, "issues", ()):
                self.stderr.write(f"  {safe_text(str(problem))}\n")
        self.stderr.flush()

    def table(
        self,
        columns: Sequence[str],
        rows: Iterable[Sequence[str]],
        *,
        title: str | None = None,
        keep: Sequence[str] = (),
    ) -> None:
        """A table; on a terminal, columns named in ``keep`` are never truncated (the
        others shrink and fold instead)."""
        if self.json_mode:
            return
        if self.plain:
            self._plain_rows(rows)
            return
        rows = [[safe_text(cell) for cell in row] for row in rows]  # servers' text
        if not self.stdout_is_tty:
            # Plain, tab-separated: easy to grep and cut.
            self.stdout.write("\t".join(c.upper() for c in columns) + "\n")
            for row in rows:
                self.stdout.write("\t".join(row) + "\n")
            self.stdout.flush()
            return
        from rich.table import Table
        from rich.text import Text

        table = Table(
            title=Text(title) if title else None,
            show_edge=False,
            header_style="bold",
            box=None,
            pad_edge=False,
        )
        for i, column in enumerate(columns):
            if column in keep:
                widest = max([len(column), *(len(row[i]) for row in rows)])
                table.add_column(Text(column.upper()), no_wrap=True, min_width=widest)
            else:
                table.add_column(Text(column.upper()), overflow="fold")
        for row in rows:
            table.add_row(*(Text(cell) for cell in row))  # literal: "[/x]" is text, not markup
        self.console.print(table)

    # ------------------------------------------------------------- prompts

    def confirm(self, question: str, *, yes: bool) -> bool:
        """``--yes`` answers yes; no TTY and no ``--yes`` refuses (exit 2), never hangs."""
        if yes:
            return True
        if not self.interactive:
            raise ConfirmationRequired(
                "confirmation needed but stdin is not a terminal",
                hint="pass --yes to confirm non-interactively",
            )
        self.stderr.write(f"{question} [y/N]: ")
        self.stderr.flush()
        answer = self.stdin.readline().strip().lower()
        return answer in ("y", "yes")

    def choose(self, question: str, options: Sequence[str]) -> str | None:
        """Pick one of ``options`` on a TTY; ``None`` without one (the caller decides)."""
        if not self.interactive or not options:
            return None
        self.stderr.write(question + "\n")
        for i, option in enumerate(options, 1):
            self.stderr.write(f"  {i}) {option}\n")
        while True:
            self.stderr.write(f"Choose 1-{len(options)}: ")
            self.stderr.flush()
            answer = self.stdin.readline()
            if not answer:
                return None
            answer = answer.strip()
            if answer.isdigit() and 1 <= int(answer) <= len(options):
                return options[int(answer) - 1]
            if answer in options:
                return answer


def _warning(message: str, code: str | None) -> dict[str, Any]:
    from osmosis_cli.terminal.envelope import warning_document

    return warning_document(message, code)
