"""The sliding window's helpers: shared deadlines and read-ahead."""

from __future__ import annotations

import asyncio

import pytest

from osmosis_local_runner.run.execute.scheduler import Deadlines, ReadAhead, deadline


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
        with deadline(5):
            result = await _fast()
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


def test_workers_whose_items_never_suspend_still_let_the_loop_turn() -> None:
    from osmosis_local_runner.run.execute.scheduler import run_window

    ran: list[int] = []
    seen_midway: list[int] = []

    async def instant(item: int) -> None:  # never awaits anything that suspends
        if item == 150:
            seen_midway.append(len(ran))
        asyncio.get_running_loop().call_soon(ran.append, item)

    asyncio.run(run_window(iter(range(200)), 2, instant))
    assert len(ran) == 200
    assert seen_midway[0] > 100  # earlier callbacks ran while the window was going


def test_journal_lines_reach_the_disk_during_an_instant_run(tmp_path: object) -> None:
    import json
    from pathlib import Path

    from osmosis_client.llm.providers import resolve_target
    from osmosis_client.rollout import AgentWorkflow
    from osmosis_local_runner.run.execute.eval_fns import EvalFn
    from osmosis_local_runner.run.execute.runner import Runner, RunSpec
    from osmosis_local_runner.run.session.journal import journal_path

    folder = Path(str(tmp_path))
    data = folder / "d.jsonl"
    data.write_text("".join(json.dumps({"user_prompt": f"{i} + 1"}) + "\n" for i in range(300)))
    out = folder / "r.json"
    lines_midway: list[int] = []

    class Instant(AgentWorkflow):
        async def run(self, ctx):  # type: ignore[no-untyped-def]
            if ctx.row_index == 250:
                lines_midway.append(len(journal_path(out).read_text().splitlines()))
            return [*ctx.prompt, await ctx.chat(ctx.prompt)]

    async def grade(ctx):  # type: ignore[no-untyped-def]
        return 1.0

    spec = RunSpec(
        model=resolve_target("mock/calculator", env={}),
        dataset=data,
        workflow=Instant(),
        eval_fns=[EvalFn("grader", grade, "grader", True)],
        output=out,
        batch_size=4,
    )
    asyncio.run(Runner(spec).run())
    assert lines_midway[0] > 150  # header + most finished attempts already written


def test_collections_are_paced_while_runs_are_in_progress_and_restored_after() -> None:
    import gc

    from osmosis_local_runner.run.execute.scheduler import RUN_GC_THRESHOLD, paced_collections

    before, frozen = gc.get_threshold(), gc.get_freeze_count()
    with paced_collections():
        assert gc.get_threshold()[0] == max(before[0], RUN_GC_THRESHOLD)
        assert gc.get_freeze_count() > frozen  # what existed before the run is not walked
        with paced_collections():  # a second run at once (asyncio.gather)
            pass
        assert gc.get_threshold()[0] == max(before[0], RUN_GC_THRESHOLD)  # still running
    assert gc.get_threshold() == before and gc.get_freeze_count() == 0
    with pytest.raises(RuntimeError), paced_collections():
        raise RuntimeError("a run that failed")
    assert gc.get_threshold() == before
