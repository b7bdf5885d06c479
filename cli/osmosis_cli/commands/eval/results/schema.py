"""``osmosis eval schema``: the JSON Schema of the results document and the files of a
run's directory, versioned (``osmosis_local_runner.results.documents.schema``) — what a script, a
notebook or another tool checks a run against."""

from __future__ import annotations

import json

import typer

from osmosis_cli.terminal.errors import current_output, handle_errors


@handle_errors
def schema(ctx: typer.Context) -> None:
    """Print the JSON Schema of the results document and a run directory's layout."""
    from osmosis_local_runner.results.documents.schema import schema_document

    out = current_output()
    document = schema_document()
    if out.detail_result(document, lines=[json.dumps(document)]):
        return
    out.stdout.write(json.dumps(document, indent=2, ensure_ascii=False) + "\n")
    out.stdout.flush()
    out.emitted = True
