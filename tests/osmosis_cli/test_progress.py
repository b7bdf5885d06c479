"""Progress output follows the terminal policy; pass rates are labelled by eval fn."""

from __future__ import annotations

import io

from osmosis_cli.commands.eval.local.execute import progress_stats
from osmosis_cli.terminal.output import Output
from osmosis_cli.terminal.progress import ProgressDisplay
from osmosis_local_runner.run.request.spec import Progress


class Tty(io.StringIO):
    def isatty(self) -> bool:
        return True


def progress(done: int, total: int = 10) -> Progress:
    p = Progress(total=total)
    p.done, p.errors, p.tokens = done, 1, 1234
    p.passed = {"grader": done // 2}
    return p


def draw(display: ProgressDisplay, p: Progress, *, stop: bool = False, force: bool = False) -> None:
    stats = progress_stats(p, ["grader"])
    if stop:
        display.stop(p.done, p.total, stats)
    else:
        display.update(p.done, p.total, stats, force=force)


def test_plain_lines_when_not_a_tty() -> None:
    err = io.StringIO()
    display = ProgressDisplay(Output(stderr=err, stdout=io.StringIO()), label="attempts")
    display.start(10)
    draw(display, progress(3), force=True)
    draw(display, progress(5))  # throttled: within 5 s of the last line
    draw(display, progress(10), stop=True)
    lines = err.getvalue().splitlines()
    assert [line.split(",")[0] for line in lines] == [
        "progress: 3/10 attempts",
        "progress: 10/10 attempts",
    ]
    assert "pass 50.0%" in lines[1] and "errors 1" in lines[1] and "tokens 1,234" in lines[1]


def test_quiet_prints_nothing() -> None:
    err = Tty()
    display = ProgressDisplay(Output(stderr=err, stdout=io.StringIO()), label="x", quiet=True)
    display.start(10)
    draw(display, progress(5), force=True)
    draw(display, progress(10), stop=True)
    assert err.getvalue() == ""


def test_rich_bar_on_a_tty(monkeypatch: object) -> None:
    err = Tty()
    display = ProgressDisplay(Output(stderr=err, stdout=io.StringIO()), label="attempts")
    display.start(10)
    draw(display, progress(10), stop=True)
    text = err.getvalue()
    assert "10/10" in text and "pass 50.0%" in text


def test_json_mode_draws_nothing() -> None:
    err = Tty()
    out = Output(stderr=err, stdout=io.StringIO(), json_mode=True)
    display = ProgressDisplay(out, label="attempts")
    display.start(10)
    draw(display, progress(10), stop=True)
    assert err.getvalue() == ""


def test_pass_rate_of_each_eval_fn_is_labelled() -> None:
    p = Progress(total=4)
    p.done, p.passed = 4, {"rewards:exact": 3, "rewards:brevity": 1}
    stats = progress_stats(p, ["rewards:exact", "rewards:brevity"])
    assert "pass[exact] 75.0%" in stats and "pass[brevity] 25.0%" in stats
    assert "pass 75.0%" in progress_stats(p, ["rewards:exact"])


def test_no_eta_before_the_first_wave_is_back_then_elapsed_and_retries_shown() -> None:
    from osmosis_client.llm import client

    p = Progress(total=2_400, window=64)
    p.started_at -= 10.0  # ten seconds in (no sleeping)
    p.done = 1  # one early answer of 64 in flight: no rate to speak of
    assert p.eta is None
    p.done = 64
    assert p.eta is not None and 300 < p.eta < 400  # 2,336 left at 6.4/s
    stats = progress_stats(p, ["grader"])
    assert "elapsed 10s" in stats and "retries" not in stats
    client.RETRIED[0] += 3  # model calls retried behind the scenes (a 500 absorbed)
    p.retried = 1
    assert "retries 4" in progress_stats(p, ["grader"])


def test_plain_progress_lines_use_thousands_separators() -> None:
    err = io.StringIO()
    display = ProgressDisplay(Output(stderr=err, stdout=io.StringIO()), label="attempts")
    display.update(1_200, 2_400, "x", force=True)
    assert err.getvalue().startswith("progress: 1,200/2,400 attempts")
