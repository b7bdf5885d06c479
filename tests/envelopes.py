"""The published CLI's ``--json`` envelopes, checked from the facts
(published-cli-0.3.8.md §1.4) — written apart from the CLI's own builders, so a test
that reads ``--json`` also proves the envelope a published-CLI script expects."""

from __future__ import annotations

import json
from typing import Any

LIST_KEYS = {"items", "total_count", "has_more", "next_offset"}
OPERATION_STATUSES = {"success", "partial", "noop", "cancelled", "no_update"}


def kind(document: Any) -> str:
    """``list``, ``detail`` or ``operation`` — or an AssertionError saying what is wrong."""
    assert isinstance(document, dict), f"not an object: {document!r:.200}"
    assert document.get("schema_version") == 1, f"schema_version: {document!r:.200}"
    if "items" in document:
        assert document.keys() >= LIST_KEYS, f"list keys: {sorted(document)}"
        assert isinstance(document["items"], list)
        assert isinstance(document["total_count"], int)
        assert isinstance(document["has_more"], bool)
        assert document["next_offset"] is None or isinstance(document["next_offset"], int)
        return "list"
    if "operation" in document:
        assert isinstance(document["operation"], str) and document["operation"]
        assert document.get("status") in OPERATION_STATUSES, document.get("status")
        for key in ("resource", "next_steps_structured"):
            if key in document:  # left out when empty, never null
                assert document[key], key
        if "resource" in document:
            assert isinstance(document["resource"], dict)
        return "operation"
    assert set(document) == {"schema_version", "data"}, f"detail keys: {sorted(document)}"
    assert isinstance(document["data"], dict)
    return "detail"


def stdout_document(stdout: str) -> dict[str, Any]:
    """Exactly one JSON document, on one line."""
    lines = [line for line in stdout.splitlines() if line.strip()]
    assert len(lines) == 1, f"expected one line on stdout, got {len(lines)}: {stdout[:300]!r}"
    document = json.loads(lines[0])
    kind(document)
    return document  # type: ignore[no-any-return]


def stderr_documents(stderr: str) -> list[dict[str, Any]]:
    """The JSON lines on stderr (errors and warnings), each checked."""
    found = []
    for line in stderr.splitlines():
        try:
            document = json.loads(line)
        except ValueError:
            continue  # user code's own prints may share stderr
        if not isinstance(document, dict) or document.get("schema_version") != 1:
            continue
        assert isinstance(document.get("cli_version"), str)
        if "error" in document:
            assert isinstance(document.get("command"), str)
            error = document["error"]
            assert {"code", "message", "details"} <= error.keys(), error
            assert isinstance(error["details"], dict)
        else:
            assert set(document["warning"]) >= {"code", "message"}
            assert "command" not in document
        found.append(document)
    return found


def error_of(stderr: str) -> dict[str, Any]:
    errors = [d["error"] for d in stderr_documents(stderr) if "error" in d]
    assert len(errors) == 1, f"expected one error envelope, got {stderr[:500]!r}"
    return errors[0]  # type: ignore[no-any-return]


def resource(stdout: str) -> dict[str, Any]:
    document = stdout_document(stdout)
    assert kind(document) == "operation", document
    return document.get("resource", {})  # type: ignore[no-any-return]


def data(stdout: str) -> dict[str, Any]:
    document = stdout_document(stdout)
    assert kind(document) == "detail", document
    return document["data"]  # type: ignore[no-any-return]


def items(stdout: str) -> list[Any]:
    document = stdout_document(stdout)
    assert kind(document) == "list", document
    return document["items"]  # type: ignore[no-any-return]
