"""The fourth hostile audit's findings against the library (issue 43, item 11): each one
as it was found, now refused or bounded."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from osmosis_client.errors import InvalidInputError
from osmosis_local_runner import load_run


def test_a_document_claiming_a_trillion_attempts_per_row_is_refused_where_it_is_read(
    tmp_path: Path,
) -> None:
    """``n_runs = 1e12`` made ``pass_at_k()`` loop for ever (``eval report`` took a
    second): counts are validated where a document is read."""
    run = {"run_index": 0, "success": True, "scores": {"g": 1.0}, "duration_ms": 1, "tokens": 1}
    document = {
        "config": {"model": "m", "n_runs": 10**12, "pass_threshold": 1.0, "eval_fns": ["g"]},
        "summary": {"total_rows": 1, "total_runs": 1, "errored_runs": 0, "status": "finished"},
        "rows": [{"row_index": 0, "runs": [run]}],
    }
    path = tmp_path / "huge.json"
    path.write_text(json.dumps(document))
    with pytest.raises(InvalidInputError, match="n_runs must be a whole number from 1 to 1,000"):
        load_run(path).pass_at_k()


def test_a_streamed_answers_logprobs_and_tool_arguments_are_never_copied_per_chunk() -> None:
    """80k streamed tokens with logprobs took 16–20 s (1.5 s without): the list was copied
    at every chunk. Each piece is now appended in place and joined once."""
    from osmosis_client.llm.streaming import ChunkAssembler, Event

    def chunk(i: int) -> Event:
        delta = {"content": f"t{i} ", "tool_calls": [{"index": 0, "function": {"arguments": "x"}}]}
        logprobs = {"content": [{"token": f"t{i}", "logprob": -0.5}]}
        body = {"choices": [{"index": 0, "delta": delta, "logprobs": logprobs}]}
        return Event(event="message", data=json.dumps(body))

    assembler = ChunkAssembler("http://model")
    assembler.add(chunk(0))
    kept = assembler.choices[0].logprobs
    arguments = assembler.choices[0].tool_calls[0].arguments
    for i in range(1, 80_000):
        assembler.add(chunk(i))
    assert assembler.choices[0].logprobs is kept  # one list, extended in place
    assert assembler.choices[0].tool_calls[0].arguments is arguments
    choice = assembler.result()["choices"][0]
    assert len(choice["logprobs"]["content"]) == 80_000
    assert choice["message"]["tool_calls"][0]["function"]["arguments"] == "x" * 80_000
