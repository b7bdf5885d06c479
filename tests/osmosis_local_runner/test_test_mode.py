"""``osmosis test``'s pieces: which model errors stop the batch, the rows it accepts,
0.2's duration format and its results document."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from osmosis_cli.commands.agent_loop.tester import duration
from osmosis_client.errors import (
    EndpointUnreachableError,
    InvalidInputError,
    ProviderRequestError,
)
from osmosis_local_runner.run.regrade.test_mode import (
    CheckSummary,
    RowResult,
    is_systemic,
    load_test_rows,
)


@pytest.mark.parametrize(
    ("exc", "systemic"),
    [
        (EndpointUnreachableError("down"), True),
        (ProviderRequestError("no", status_code=401), True),
        (ProviderRequestError("no", status_code=403), True),
        (ProviderRequestError("no", status_code=404), True),
        (ProviderRequestError("You exceeded your current quota", status_code=429), True),
        (ProviderRequestError("slow down", status_code=429), False),
        (ProviderRequestError("bad", status_code=400), False),
        (ProviderRequestError("oops", status_code=500), False),
        (ValueError("user code"), False),
    ],
)
def test_systemic_errors(exc: Exception, systemic: bool) -> None:
    assert is_systemic(exc) is systemic


def test_rows_need_every_column_and_keep_their_indices(tmp_path: Path) -> None:
    path = tmp_path / "d.jsonl"
    row = {"system_prompt": "s", "user_prompt": "u", "ground_truth": "g"}
    rows = [row, {**row, "Ground_Truth": "x"}, row, {**row, "system_prompt": "  "}]
    rows[1].pop("ground_truth")
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    chosen, total = load_test_rows(path, limit=1, offset=2)
    assert total == 4 and [r.index for r in chosen] == [2]
    with pytest.raises(InvalidInputError) as info:
        load_test_rows(path, limit=None, offset=0)
    assert "row 3: system_prompt must be a non-empty string" in info.value.message
    assert "row 1" not in info.value.message  # column names are case-insensitive


def test_durations_as_0_2_printed_them() -> None:
    assert [duration(ms) for ms in (49, 1200, 63_000)] == ["49ms", "1.2s", "1m3.0s"]


def test_the_document_has_0_2s_keys_only() -> None:
    ok = RowResult(0, True, None, 5, {"total_tokens": 10}, None, "stop", [{"role": "user"}])
    bad = RowResult(1, False, "boom", 3, {}, None, None)
    doc = CheckSummary([ok, bad], 8).document()
    assert doc["summary"] == {
        "total": 2,
        "passed": 1,
        "failed": 1,
        "total_duration_ms": 8,
        "total_tokens": 10,
    }
    assert "messages" not in doc["results"][0] and doc["results"][1]["error"] == "boom"
