"""A model-call cache that never lies (issue 54): against a loopback peer that counts
requests — a second identical run makes no call and gives the same results, marked as
cached; n attempts stay n samples; new weights behind the same name, or another
sampling parameter, miss; an error is never stored; a judge is asked once per input;
a run is replayed from its record; two processes and a suite's parallel entries leave
one consistent cache."""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Any

import pytest

from osmosis_local_runner import run_eval
from tests.stub_openai import StubOpenAI

CONFIG = "configs/eval/quickstart.toml"


@pytest.fixture(autouse=True)
def cache_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    where = tmp_path / "cache"
    monkeypatch.setenv("OSMOSIS_CACHE_DIR", str(where))
    return where


def served(stub: StubOpenAI, root: str) -> None:
    """The peer lists its model with the weights' root, as vLLM does."""
    stub.state.models = [{"id": "stub", "object": "model", "root": root, "parent": None}]


def scores(path: Path) -> list[tuple[int, int, Any, str]]:
    document = json.loads(path.read_text())
    return sorted(
        (row["row_index"], run["run_index"], run["scores"], run.get("answer") or "")
        for row in document["rows"]
        for run in row["runs"]
    )


def test_a_second_identical_run_makes_no_call(quickstart_project: Path) -> None:
    with StubOpenAI() as stub:
        served(stub, "/ckpt/step-100")
        options = dict(model="stub", base_url=stub.url, limit=4, n=2, cache=True)
        first = run_eval(CONFIG, output=quickstart_project / "a.json", **options)
        made = len(stub.state.requests)
        second = run_eval(CONFIG, output=quickstart_project / "b.json", **options)
        assert len(stub.state.requests) == made  # not one call
    assert scores(first.path) == scores(second.path)
    usage = json.loads(second.path.read_text())["summary"]["usage"]
    assert usage["cached_calls"] == made and usage["calls"] == 0 and usage["cost_usd"] == 0
    assert second.summary.usage is not None and second.summary.usage.cached_calls == made
    document = json.loads(second.path.read_text())
    assert document["summary"]["cache"]["hits"] == made
    calls = [c for row in document["rows"] for run in row["runs"] for c in run["model_calls"]]
    assert {c["cached"] for c in calls} == {"cache"}


def counting(stub: StubOpenAI) -> None:
    """Every answer is new (a sampled model): 'n' attempts are 'n' different answers."""
    made = [0]

    def answer(body: dict[str, Any]) -> dict[str, Any]:
        made[0] += 1
        return {"role": "assistant", "content": f"sample {made[0]}"}

    stub.state.responder = answer


def test_n_attempts_stay_n_samples_and_only_what_decides_the_answer_hits(
    quickstart_project: Path,
) -> None:
    out = quickstart_project
    with StubOpenAI() as stub:
        served(stub, "/ckpt/step-100")
        counting(stub)
        options: dict[str, Any] = dict(model="stub", base_url=stub.url, limit=2, n=4, cache=True)
        first = run_eval(CONFIG, output=out / "a.json", **options)
        answers = [a for *_, a in scores(first.path)]
        assert len(set(answers)) == 8  # 2 rows × 4 attempts: 8 samples, none collapsed
        made = len(stub.state.requests)
        again = run_eval(CONFIG, output=out / "b.json", **options)
        assert len(stub.state.requests) == made
        assert [a for *_, a in scores(again.path)] == answers  # each attempt its own answer
        # another sampling parameter: another request, so every call is made
        run_eval(CONFIG, output=out / "c.json", sampling_args={"top_p": 0.5}, **options)
        assert len(stub.state.requests) == 2 * made
        # new weights behind the same served name: every call is made again
        served(stub, "/ckpt/step-200")
        run_eval(CONFIG, output=out / "d.json", **options)
        assert len(stub.state.requests) == 3 * made
        # a checkpoint's own identity (the run's weights) is part of the key too
        run_eval(CONFIG, output=out / "e.json", series="grpo", step=300, **options)
        assert len(stub.state.requests) == 4 * made


def test_an_error_is_never_stored_and_an_unknown_endpoint_is_not_cached(
    quickstart_project: Path, caplog: pytest.LogCaptureFixture
) -> None:
    out = quickstart_project
    with StubOpenAI() as stub:
        served(stub, "/ckpt/a")
        stub.fail_next(400)  # one attempt's call is refused
        options: dict[str, Any] = dict(model="stub", base_url=stub.url, limit=3, n=1, cache=True)
        first = run_eval(CONFIG, output=out / "a.json", batch_size=1, **options)
        assert json.loads(first.path.read_text())["summary"]["errored_runs"] == 1
        made = len(stub.state.requests)
        run_eval(CONFIG, output=out / "b.json", batch_size=1, **options)
        assert len(stub.state.requests) == made + 1  # only the errored call is made again
        # a server that cannot say which weights it serves: never cached, said once
        stub.state.models = []
        caplog.set_level(logging.INFO)
        unknown = run_eval(CONFIG, output=out / "c.json", **options)
        assert len(stub.state.requests) == made + 4
        assert json.loads(unknown.path.read_text())["summary"]["cache"]["not_cached"]
        assert "are not cached" in caplog.text
        # …unless the user names its weights
        run_eval(CONFIG, output=out / "d.json", cache_scope="base-qwen3", **options)
        run_eval(CONFIG, output=out / "e.json", cache_scope="base-qwen3", **options)
        assert len(stub.state.requests) == made + 7


def test_a_run_is_replayed_from_its_record(quickstart_project: Path) -> None:
    out = quickstart_project
    with StubOpenAI() as stub:
        counting(stub)
        first = run_eval(CONFIG, output=out / "a.json", model="stub", base_url=stub.url, limit=3)
        made = len(stub.state.requests)
        replayed = run_eval(
            CONFIG,
            output=out / "b.json",
            model="stub",
            base_url=stub.url,
            limit=4,
            replay=str(first.path),
        )
        # the three recorded rows answered from the record; the fourth row called
        assert len(stub.state.requests) == made + 3
    assert scores(replayed.path)[:9] == scores(first.path)
    document = json.loads(replayed.path.read_text())
    assert document["summary"]["cache"]["replayed"] == made


JUDGE = """import os

from osmosis_client.rewards.rubric import aevaluate_rubric


async def judged(messages, ground_truth, metadata, **kw):
    info = {"model": "judge", "base_url": os.environ["JUDGE_URL"], "api_key": "sk-judge"}
    return await aevaluate_rubric("Is it right?", messages[-1]["content"], info)
"""


def judge_peer(stub: StubOpenAI) -> None:
    stub.state.models = [{"id": "judge", "object": "model", "root": "Qwen/Qwen3-8B"}]
    stub.state.responder = lambda body: {
        "role": "assistant",
        "content": '{"score": 1, "explanation": "right"}',
    }


def test_a_judge_is_asked_once_per_input(
    quickstart_project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from osmosis_local_runner.run.regrade.rescore import rescore

    (quickstart_project / "judge.py").write_text(JUDGE)
    run = run_eval(CONFIG, output=quickstart_project / "r.json", model="mock/calculator", limit=4)
    with StubOpenAI() as judge:
        judge_peer(judge)
        monkeypatch.setenv("JUDGE_URL", judge.url)
        first = rescore(run.path, ["judge.py:judged"], quickstart_project / "a.json", cache=True)
        asked = len(judge.state.requests)
        # 4 rows × 3 attempts, but the mock answers a row's attempts alike: the judge is
        # asked once per distinct input (identical ones in flight wait for the first)
        assert first.summary["total_runs"] == 12 and asked == 4
        again = rescore(run.path, ["judge.py:judged"], quickstart_project / "b.json", cache=True)
        assert len(judge.state.requests) == asked  # unchanged inputs: no call at all
    assert again.summary["eval_fns"] == first.summary["eval_fns"]


WRITER = """
import sys
from pathlib import Path
from osmosis_client.llm.cache import CallCache, key_of, key_parts

cache = CallCache.open(Path(sys.argv[1]))
who = sys.argv[2]
for i in range(300):
    parts = key_parts("http://peer/v1", "chat", "served:root=/w", f"body {i}", ["row", i % 7, 0])
    answer = {"choices": [{"message": {"content": who}, "finish_reason": "stop"}]}
    cache.put(key_of(parts), parts, answer)
    cache.get(key_of(parts))
cache.close()
"""


def test_two_processes_leave_one_consistent_cache(tmp_path: Path, cache_dir: Path) -> None:
    import sqlite3
    import subprocess
    import sys

    script = tmp_path / "writer.py"
    script.write_text(WRITER)
    writers = [
        subprocess.Popen([sys.executable, str(script), str(cache_dir), name])
        for name in ("one", "two")
    ]
    assert [w.wait(timeout=120) for w in writers] == [0, 0]
    db = sqlite3.connect(cache_dir / "calls.sqlite")
    assert db.execute("PRAGMA integrity_check").fetchone() == ("ok",)
    assert db.execute("SELECT COUNT(*) FROM calls").fetchone() == (300,)  # one per key
    answers = {
        json.loads(a)["choices"][0]["message"]["content"]
        for (a,) in db.execute("SELECT answer FROM calls")
    }
    assert answers <= {"one", "two"}


def test_a_suites_parallel_entries_share_the_cache(quickstart_project: Path) -> None:
    from osmosis_local_runner import run_suite

    suite = quickstart_project / "configs/eval/sweep.toml"
    with StubOpenAI() as stub:
        served(stub, "/ckpt/a")
        suite.write_text(
            'suite = "sweep"\nrollout = "calculator"\nentrypoint = "main.py"\n'
            'model_path = "stub"\ndataset = "arithmetic"\nlimit = 3\n\n'
            "[[ablation]]\n[ablation.sweep]\nn = [1, 2]\n"
        )
        options: dict[str, Any] = dict(base_url=stub.url, parallel=2, cache=True)
        first = run_suite(suite, output=quickstart_project / "s1", **options)
        made = len(stub.state.requests)
        assert first.status == "finished" and made > 0
        again = run_suite(suite, output=quickstart_project / "s2", **options)
        assert again.status == "finished" and len(stub.state.requests) == made


def test_the_cache_command_explains_a_miss_and_forgets(
    quickstart_project: Path, cache_dir: Path
) -> None:
    from tests.helpers import run_cli

    def cli(*args: str) -> tuple[int, str]:
        code, out, err = run_cli(*args)
        return code, out + err

    with StubOpenAI() as stub:
        served(stub, "/ckpt/a")
        options: dict[str, Any] = dict(model="stub", base_url=stub.url, limit=2, n=1, cache=True)
        run_eval(CONFIG, name="one", **options)
        run_eval(CONFIG, name="two", sampling_args={"top_p": 0.3}, **options)
    code, text = cli("cache", "stats")
    assert code == 0 and "4 calls" in text and "served:root=/ckpt/a" in text
    code, text = cli("cache", "explain", "two", "0", "0")
    assert code == 0 and "call 0: called" in text and "stored" in text
    assert "request fields that differ: top_p" in text  # why "one"'s answer did not serve
    code, text = cli("cache", "prune", "--older-than", "30d")
    assert code == 0 and "Removed 0 calls" in text
    code, text = cli("cache", "clear")  # no terminal to ask: refused, nothing removed
    assert code == 2
    code, text = cli("cache", "clear", "--yes")
    assert code == 0 and "Removed 4 calls" in text
    code, text = cli("cache", "prune", "--older-than", "soon")
    assert code == 2 and "is not a duration" in text


def test_the_mock_is_never_cached_and_says_so(
    quickstart_project: Path, caplog: pytest.LogCaptureFixture, cache_dir: Path
) -> None:
    caplog.set_level(logging.INFO)
    result = run_eval(CONFIG, output=quickstart_project / "m.json", limit=2, cache=True)
    assert "the mock model's calls are not cached" in caplog.text
    assert "cached_calls" not in (json.loads(result.path.read_text())["summary"]["usage"] or {})


def test_only_finished_answers_are_storable() -> None:
    from osmosis_client.llm.cache import canonical_body, storable

    def answer(*reasons: Any) -> dict[str, Any]:
        return {"choices": [{"message": {"content": "x"}, "finish_reason": r} for r in reasons]}

    assert (
        storable(answer("stop")) and storable(answer("length")) and storable(answer("tool_calls"))
    )
    assert not storable(answer("content_filter"))  # refused by a filter: asked again
    assert not storable(answer(None))  # cut short (a stream that never finished)
    assert not storable({"choices": []}) and not storable({"error": "x"})
    # transport fields are not part of a request's key; every other field is
    body = {"model": "m", "messages": [], "stream": True, "stream_options": {"x": 1}}
    assert canonical_body(body) == canonical_body({"messages": [], "model": "m"})
    assert canonical_body({**body, "temperature": 0.5}) != canonical_body(body)
