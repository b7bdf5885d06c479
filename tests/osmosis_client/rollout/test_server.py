"""The rollout server under load, and when the trainer disappears (in-process, fast)."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import aiohttp
import pytest

from osmosis_client.rollout import (
    RolloutAgentLoop,
    RolloutContext,
    RolloutRequest,
    RolloutResult,
    create_tool_result,
    get_tool_call_info,
)
from osmosis_client.rollout.agent_loop.server import RolloutServer
from tests.e2e.trainer_double import Trainer, init_body

TOOLS = [
    {"type": "function", "function": {"name": n, "parameters": {"type": "object"}}}
    for n in ("add", "subtract", "multiply", "divide")
]


class Calculator(RolloutAgentLoop):
    name = "calculator"

    def get_tools(self, request: RolloutRequest) -> list[Any]:
        return TOOLS

    async def run(self, ctx: RolloutContext) -> RolloutResult:
        messages = list(ctx.request.messages)
        while True:
            result = await ctx.chat(messages)
            messages.append(result.message)
            if not result.has_tool_calls:
                return ctx.complete(messages)
            for call in result.tool_calls:
                call_id, name, args = get_tool_call_info(call)
                a, b = float(args["a"]), float(args["b"])
                value = {"add": a + b, "subtract": a - b, "multiply": a * b, "divide": a / b}[name]
                messages.append(create_tool_result(call_id, f"{value:g}"))
                ctx.record_tool_call()


async def no_sleep(seconds: float) -> None:
    await asyncio.sleep(0)


def wait_for_completions(trainer: Trainer, count: int, stalled_after: float = 120.0) -> None:
    """Until ``count`` callbacks arrived; fails only when none arrives for ``stalled_after``
    seconds (progress, not speed, is what a test may ask of a shared machine)."""
    import time

    with trainer.changed:
        seen, since = len(trainer.state.completed), time.monotonic()
        while len(trainer.state.completed) < count:
            trainer.changed.wait(1.0)
            if len(trainer.state.completed) != seen:
                seen, since = len(trainer.state.completed), time.monotonic()
            elif time.monotonic() - since > stalled_after:
                raise AssertionError(f"stalled at {seen}/{count} completions")


@pytest.mark.slow
def test_two_hundred_concurrent_rollouts_complete() -> None:
    async def main(trainer: Trainer) -> tuple[dict[str, Any], RolloutServer]:
        server = RolloutServer(Calculator(), max_concurrent=100)
        port = await server.start("127.0.0.1", 0)
        async with aiohttp.ClientSession() as session:

            async def init(i: int) -> int:
                body = init_body(f"load-{i}", trainer.url, question=f"What is {i} + 1?")
                async with session.post(f"http://127.0.0.1:{port}/v1/rollout/init", json=body) as r:
                    return r.status

            statuses = await asyncio.gather(*(init(i) for i in range(200)))
            assert statuses == [202] * 200
            async with session.get(f"http://127.0.0.1:{port}/health") as r:
                health = await r.json()
        # a busy machine may be slow: wait while rollouts keep completing, however long
        await asyncio.to_thread(wait_for_completions, trainer, 200)
        await server.stop()
        return health, server

    with Trainer() as trainer:
        health, server = asyncio.run(main(trainer))
        completed = trainer.state.completed
    assert health["active_rollouts"] + health["completed_rollouts"] == 200
    assert len(completed) == 200
    assert all(c["status"] == "COMPLETED" for c in completed.values())
    assert completed["load-41"]["final_messages"][-1]["content"] == "42"
    assert server.stats.completed == 200 and server.stats.active == 0


def test_a_vanished_trainer_only_costs_failed_callbacks() -> None:
    async def main() -> RolloutServer:
        trainer = Trainer()
        trainer.__enter__()
        url = trainer.url
        trainer.stop()  # gone before the first callback
        server = RolloutServer(Calculator(), sleep=no_sleep)
        port = await server.start("127.0.0.1", 0)
        async with aiohttp.ClientSession() as session:
            for i in range(5):
                async with session.post(
                    f"http://127.0.0.1:{port}/v1/rollout/init", json=init_body(f"gone-{i}", url)
                ) as r:
                    assert r.status == 202
            for _ in range(3000):  # a generous bound: progress, not speed
                if server.stats.callbacks_failed == 5:
                    break
                await asyncio.sleep(0.02)
            async with session.get(f"http://127.0.0.1:{port}/health") as r:
                assert r.status == 200 and (await r.json())["completed_rollouts"] == 5
        await server.stop()
        return server

    server = asyncio.run(main())
    assert server.stats.callbacks_failed == 5  # logged, counted, no crash
    records = server.stats.rollouts
    assert set(records) == {f"gone-{i}" for i in range(5)}  # the records are kept
    assert all(r.result is not None and r.result.status.value == "ERROR" for r in records.values())
    assert "cannot reach" in (records["gone-0"].result.error_message or "")  # type: ignore[union-attr]


def test_concurrency_cap_queues_the_rest() -> None:
    started: list[str] = []
    release = asyncio.Event()

    class Slow(Calculator):
        async def run(self, ctx: RolloutContext) -> RolloutResult:
            started.append(ctx.request.rollout_id)
            await release.wait()
            return ctx.complete([])

    async def main() -> dict[str, Any]:
        with Trainer() as trainer:
            server = RolloutServer(Slow(), max_concurrent=3)
            port = await server.start("127.0.0.1", 0)
            async with aiohttp.ClientSession() as session:
                for i in range(5):
                    await session.post(
                        f"http://127.0.0.1:{port}/v1/rollout/init",
                        data=json.dumps(init_body(f"q-{i}", trainer.url)),
                        headers={"Content-Type": "application/json"},
                    )
                for _ in range(6000):  # until the cap is reached, however slow the machine
                    if len(started) >= 3:
                        break
                    await asyncio.sleep(0.01)
                await asyncio.sleep(0.1)  # a fourth would have started by now if it could
                async with session.get(f"http://127.0.0.1:{port}/health") as r:
                    health = await r.json()
                running = len(started)
                release.set()
                await asyncio.sleep(0.2)
            await server.stop()
            return {"health": health, "running": running}

    out = asyncio.run(main())
    assert out["running"] == 3  # the cap
    assert out["health"]["active_rollouts"] == 5  # queued rollouts count as active
