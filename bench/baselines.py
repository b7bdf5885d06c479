"""What the runner is measured against: the loopback stub (in its own process), bare
aiohttp and httpx loops posting the same request, our model client alone, and the
datasets the runs read."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
CONCURRENCY = 64


class Stub:
    """The loopback stub in its own process (so it does not share our GIL)."""

    def __init__(self, latency: float = 0.0) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "tests.stub_openai", "--latency", str(latency)],
            cwd=ROOT,
            stdout=subprocess.PIPE,
            text=True,
        )
        assert self.proc.stdout is not None
        self.url = self.proc.stdout.readline().strip()

    def close(self) -> None:
        self.proc.terminate()
        self.proc.wait(10)


async def _load(n: int, concurrency: int, one: Callable[[], Awaitable[Any]]) -> float:
    remaining = iter(range(n))

    async def worker() -> None:
        for _ in remaining:
            await one()

    started = time.perf_counter()
    await asyncio.gather(*(worker() for _ in range(concurrency)))
    return n / (time.perf_counter() - started)


async def raw_aiohttp(url: str, n: int) -> float:
    import aiohttp

    body = json.dumps({"model": "m", "messages": [{"role": "user", "content": "What is 1 + 1?"}]})
    async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=CONCURRENCY)) as s:

        async def one() -> None:
            async with s.post(
                f"{url}/chat/completions", data=body, headers={"Content-Type": "application/json"}
            ) as r:
                await r.read()

        await _load(200, CONCURRENCY, one)  # warm up connections
        return await _load(n, CONCURRENCY, one)


async def cold_aiohttp(url: str, n: int) -> float:
    """Attempts/s of a bare aiohttp loop doing one whole job from a cold session (no
    warm-up): the fair baseline for a short run measured end to end."""
    import aiohttp

    body = json.dumps({"model": "m", "messages": [{"role": "user", "content": "What is 1 + 1?"}]})
    started = time.perf_counter()
    async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=CONCURRENCY)) as s:

        async def one() -> None:
            async with s.post(
                f"{url}/chat/completions", data=body, headers={"Content-Type": "application/json"}
            ) as r:
                await r.read()

        await _load(n, CONCURRENCY, one)
    return n / (time.perf_counter() - started)


async def model_client_loop(url: str, n: int) -> float:
    """Calls/s of our ModelClient alone (request encoded, answer read and decoded)."""
    from osmosis_client.llm.client import ModelClient
    from osmosis_client.llm.providers import resolve_target

    messages = [{"role": "user", "content": "What is 1 + 1?"}]
    async with ModelClient(resolve_target("served", base_url=url, env={})) as client:

        async def one() -> None:
            await client.chat(messages)

        await _load(200, CONCURRENCY, one)
        return await _load(n, CONCURRENCY, one)


async def raw_httpx(url: str, n: int) -> float:
    import httpx

    body = {"model": "m", "messages": [{"role": "user", "content": "What is 1 + 1?"}]}
    limits = httpx.Limits(max_connections=CONCURRENCY, max_keepalive_connections=CONCURRENCY)
    async with httpx.AsyncClient(limits=limits, timeout=60) as c:

        async def one() -> None:
            (await c.post(f"{url}/chat/completions", json=body)).raise_for_status()

        await _load(100, CONCURRENCY, one)
        return await _load(n, CONCURRENCY, one)


def make_dataset(path: Path, rows: int) -> Path:
    with path.open("w") as f:
        for i in range(rows):
            f.write(
                json.dumps(
                    {"user_prompt": f"What is {i} + {i}?", "ground_truth": str(2 * i), "id": i}
                )
                + "\n"
            )
    return path
