"""What a command hands to a program: the ``--json`` envelopes and ``--plain`` lines.

Mixed into :class:`~osmosis_cli.terminal.output.Output`; each ``*_result`` method writes
the machine form and returns True, or returns False so the caller renders for humans.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import IO, Any

from osmosis_client._redact import safe_json, safe_text
from osmosis_client.errors import OsmosisError


class ResultWriter:
    json_mode: bool
    plain: bool
    emitted: bool
    stdout: IO[str]

    def info(self, message: str) -> None:  # Output's: a note on stderr
        raise NotImplementedError

    @property
    def machine(self) -> bool:
        """``--json`` or ``--plain``: the result is written for a program."""
        return self.json_mode or self.plain

    def emit_json(self, document: Any) -> None:
        """The one JSON document of a ``--json`` command, on one line."""
        text = json.dumps(document, ensure_ascii=False, default=str)
        self.stdout.write(safe_json(text) + "\n")
        self.stdout.flush()
        self.emitted = True

    def list_result(
        self,
        items: Sequence[Any],
        *,
        rows: Iterable[Sequence[str]] = (),
        total_count: int | None = None,
        has_more: bool = False,
        next_offset: int | None = None,
        extra: dict[str, Any] | None = None,
    ) -> bool:
        """A list: the list envelope (``--json``) or ``rows`` tab-separated without a
        header (``--plain``). False for humans: the caller draws its table."""
        if self.json_mode:
            from osmosis_cli.terminal.envelope import list_document

            self.emit_json(
                list_document(
                    items,
                    total_count=total_count,
                    has_more=has_more,
                    next_offset=next_offset,
                    extra=extra,
                )
            )
            return True
        if self.plain:
            self._plain_rows(rows)
            return True
        return False

    def detail_result(self, data: dict[str, Any], *, lines: Iterable[str] | None = None) -> bool:
        """One object: the detail envelope (``--json``) or ``Label: value`` lines
        (``--plain``; ``lines`` or the object's own scalars). False for humans."""
        if self.json_mode:
            from osmosis_cli.terminal.envelope import detail_document

            self.emit_json(detail_document(data))
            return True
        if self.plain:
            for line in _plain_lines(data) if lines is None else lines:
                self.stdout.write(one_line(line) + "\n")
            self.stdout.flush()
            self.emitted = True
            return True
        return False

    def cancelled(self, operation: str) -> None:
        """A declined confirmation: nothing changed, exit 0 (as the published CLI)."""
        if not self.operation_result(operation, status="cancelled", message="Cancelled."):
            self.info("Cancelled.")

    def operation_result(
        self,
        operation: str,
        *,
        status: str = "success",
        resource: dict[str, Any] | None = None,
        message: str | None = None,
        next_steps: Sequence[dict[str, Any]] = (),
        extra: dict[str, Any] | None = None,
    ) -> bool:
        """What an action did: the operation envelope (``--json``) or its message
        (``--plain``). False for humans: the caller says it its own way."""
        if self.json_mode:
            from osmosis_cli.terminal.envelope import operation_document

            self.emit_json(
                operation_document(
                    operation,
                    status=status,
                    resource=resource,
                    message=message,
                    next_steps=next_steps,
                    extra=extra,
                )
            )
            return True
        if self.plain:
            self.stdout.write(one_line(message or f"{operation}: {status}") + "\n")
            self.stdout.flush()
            self.emitted = True
            return True
        return False

    def operation_with_file(
        self,
        operation: str,
        *,
        status: str,
        resource: dict[str, Any],
        path: Path,
        message: str | None = None,
    ) -> None:
        """The operation envelope whose ``resource`` is ``resource`` merged with the JSON
        object in ``path`` — streamed, never loaded whole, written on one line (a JSON
        text has raw newlines only between tokens, so dropping them keeps its meaning)."""
        from osmosis_cli.terminal.envelope import operation_document

        head = operation_document(operation, status=status, message=message)
        head_text = json.dumps(head, ensure_ascii=False, default=str)[:-1]
        resource_text = json.dumps(resource, ensure_ascii=False, default=str)[:-1]
        self.stdout.write(safe_json(f'{head_text}, "resource": {resource_text}'))
        with path.open("r", encoding="utf-8") as handle:
            opening = handle.read(1 << 16).lstrip()
            if not opening.startswith("{"):
                raise OsmosisError(f"{path} does not hold a JSON object", code="INTERNAL")
            rest = opening[1:].lstrip().replace("\n", "")
            if resource and rest and not rest.startswith("}"):
                self.stdout.write(", ")
            for chunk in _chunks(rest, handle):
                self.stdout.write(safe_json(chunk.replace("\n", "")))
        self.stdout.write("}\n")
        self.stdout.flush()
        self.emitted = True

    def _plain_rows(self, rows: Iterable[Sequence[str]]) -> None:
        for row in rows:
            self.stdout.write("\t".join(one_line(cell) for cell in row) + "\n")
        self.stdout.flush()
        self.emitted = True


def one_line(text: Any) -> str:
    """A plain cell or line: tabs and newlines become spaces, controls go."""
    value = "" if text is None else str(text)
    return safe_text(value.replace("\t", " ").replace("\r", " ").replace("\n", " "))


def _plain_lines(data: dict[str, Any]) -> Iterator[str]:
    """``Label: value`` lines of an object's scalars, then ``Section:`` blocks."""
    sections = []
    for key, value in data.items():
        if isinstance(value, dict):
            sections.append((key, value))
        elif not isinstance(value, list) and value is not None:
            yield f"{key}: {value}"
    for key, section in sections:
        scalars = [(k, v) for k, v in section.items() if not isinstance(v, dict | list)]
        if scalars:
            yield f"{key}:"
            for k, v in scalars:
                if v is not None:
                    yield f"  {k}: {v}"


def _chunks(first: str, handle: IO[str]) -> Iterator[str]:
    yield first
    yield from iter(lambda: handle.read(1 << 16), "")
