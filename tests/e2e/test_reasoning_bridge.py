"""A server-mode rollout (the independent double, streaming, tool loop) whose model is a
thinking Claude on loopback (tests/reasoning_peer.py): the double rebuilds each answer
from its text and calls (its SSE parser keeps nothing else), yet Anthropic gets its
signed thinking back on the tool continuation — the bridge gives the attempt's reasoning
back by tool-call id — and the run counts every call's tokens by kind."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

import pytest

from osmosis_client.platform.eval.eval_config import load_config
from osmosis_local_runner.run.execute.runner import Runner
from osmosis_local_runner.run.request.overrides import Overrides, config_spec
from osmosis_local_runner.server import environment
from tests.reasoning_peer import ReasoningPeer
from tests.server_workspace import server_workspace

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(not Path("/proc").is_dir(), reason="needs Linux /proc"),
]


@pytest.mark.parametrize("stream", ["1", "0"], ids=["streamed", "whole"])
def test_a_server_rollout_gives_claude_its_thinking_back_through_the_bridge(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, stream: str
) -> None:
    monkeypatch.setattr(environment, "MIN_PYTHON", (3, 10))
    with ReasoningPeer("anthropic") as peer:
        root = tmp_path / "ws"
        config = server_workspace(
            root,
            env={"FAKE_STREAM": stream, "FAKE_TOOLS": "1"},
            model="claude",
            evaluation={"limit": 4, "batch_size": 2},
            local={"reasoning_effort": "high"},
        )
        (root / "configs" / "endpoints.toml").write_text(
            f'[[endpoint]]\nendpoint_id = "claude"\nmodel = "claude-sonnet-4-5"\n'
            f'url = "{peer.url}"\napi_client_type = "anthropic_messages"\n'
        )
        flags = Overrides(output=tmp_path / "r.json", rollout_python=Path(sys.executable))
        result = asyncio.run(Runner(config_spec(load_config(config), flags)).run())
    assert peer.refused == [], peer.refused
    assert result.summary["eval_fns"]["grader"]["mean"] == 1.0
    continuations = [b for b in peer.bodies("/messages") if len(b["messages"]) > 1]
    assert len(continuations) == 4
    for body in continuations:  # the assistant turn starts with its signed thinking
        assert body["messages"][1]["content"][0]["type"] == "thinking"
        assert body["thinking"] == {"type": "enabled", "budget_tokens": 4096}
    usage = result.summary["usage"]
    assert usage["calls"] == 8 and usage["reasoning_tokens"] == 8 * 45
    assert usage["cache_read_tokens"] == 4 * 100 and usage["cache_write_tokens"] == 4 * 100
    run = result.document["rows"][0]["runs"][0]
    assert run["usage"]["calls"] == 2 and run["usage"]["model"] == "claude"
