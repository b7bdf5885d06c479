"""The sliding window's helpers: shared deadlines and read-ahead."""

from __future__ import annotations

import asyncio

import pytest

from osmosis_local_runner.scheduler import Deadlines, ReadAhead, deadline, with_timeout


async def _fast() -> str:
    await asyncio.sleep(0)
    return "done"


def test_a_deadline_that_passes_raises_timeout_inside_the_block() -> None:
    async def main() -> tuple[bool, str]:
        timed_out = False
        try:
            with deadline(0.01):
                await asyncio.sleep(10)
        except TimeoutError:
            timed_out = True
        after = await _fast()  # the task is usable afterwards: no stray cancellation
        return timed_out, after

    assert asyncio.run(asyncio.wait_for(main(), 5)) == (True, "done")


def test_a_block_that_finishes_in_time_is_untouched() -> None:
    async def main() -> str:
        result = await with_timeout(_fast(), 5)
        await asyncio.sleep(Deadlines.TICK * 2)  # the checker runs and finds it done
        return result

    assert asyncio.run(main()) == "done"


def test_cancellation_from_outside_wins_over_the_deadline() -> None:
    async def victim() -> None:
        with deadline(0.01):
            await asyncio.sleep(10)

    async def main() -> None:
        task = asyncio.ensure_future(victim())
        await asyncio.sleep(0)
        task.cancel()
        await task

    with pytest.raises(asyncio.CancelledError):
        asyncio.run(main())


def test_many_deadlines_fire_independently() -> None:
    async def one(i: int) -> str:
        try:
            with deadline(0.01 if i % 2 else 5):
                await asyncio.sleep(0.3 if i % 2 else 0)
        except TimeoutError:
            return "timeout"
        return "ok"

    async def main() -> list[str]:
        return await asyncio.gather(*(one(i) for i in range(10)))

    assert asyncio.run(main()) == ["ok", "timeout"] * 5


def test_read_ahead_yields_every_item_once_in_order() -> None:
    pulled: list[int] = []

    def source() -> object:
        for i in range(10):
            pulled.append(i)
            yield i

    async def main() -> list[int]:
        items = ReadAhead(iter(source()), 3)  # type: ignore[arg-type]
        out = [next(items)]
        await asyncio.sleep(0.01)  # idle: the read-ahead prepares up to 3 more
        assert pulled == [0, 1, 2, 3]
        out.extend(items)
        return out

    assert asyncio.run(main()) == list(range(10))


def test_read_ahead_without_a_loop_is_a_plain_iterator() -> None:
    assert list(ReadAhead(iter(range(5)), 2)) == [0, 1, 2, 3, 4]
