"""The one progress display: a rich bar on a TTY, a plain line every few seconds
otherwise, nothing with ``--quiet`` or ``--json``. Commands supply the numbers and
a short stats text; the display decides how often and where to draw.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable, Iterator
from typing import Any

from osmosis_cli.terminal.output import Output

PLAIN_EVERY = 5.0
RICH_EVERY = 0.1


class ProgressDisplay:
    def __init__(self, out: Output, *, label: str, quiet: bool = False) -> None:
        self.out = out
        self.label = label
        self.quiet = quiet or out.json_mode
        self.rich = not self.quiet and out.stderr_is_tty
        self._bar: Any = None
        self._task: Any = None
        self._last = 0.0
        self._drawn = 0

    def start(self, total: int) -> None:
        if not self.rich:
            return
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn

        self._bar = Progress(
            TextColumn(self.label, style="bold", markup=False),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("{task.fields[stats]}", markup=False),
            console=self.out.err_console,
            transient=False,
        )
        self._task = self._bar.add_task(self.label, total=total, stats="")
        self._bar.start()
        bar = self._bar
        self.out.above = lambda text: bar.console.print(text, markup=False, highlight=False)

    def update(
        self, done: int, total: int, stats: str, *, eta: float | None = None, force: bool = False
    ) -> None:
        if self.quiet:
            return
        now = time.monotonic()
        if not force and now - self._last < (RICH_EVERY if self.rich else PLAIN_EVERY):
            return
        self._last = now
        text = stats + (f"  ETA {eta:.0f}s" if eta is not None and done < total else "")
        if self._bar is not None:
            self._bar.update(self._task, completed=done, total=total, stats=text)
        elif done and done != self._drawn:
            self._drawn = done
            self.out.stderr.write(f"progress: {done:,}/{total:,} {self.label}, {text}\n")
            self.out.stderr.flush()

    def stop(self, done: int, total: int, stats: str) -> None:
        """The final state (a last plain line, or the bar at its end)."""
        self.update(done, total, stats, force=True)
        if self._bar is not None:
            self._bar.stop()
            self._bar = None
            self.out.above = None


@contextlib.contextmanager
def byte_progress(out: Output, total: int | None, label: str) -> Iterator[Callable[[int], None]]:
    """A transfer's progress (bytes, rate, ETA): a rich bar on a TTY, a plain line every
    few seconds otherwise, nothing with ``--json``. Yields ``add(n)``; ``n`` may be
    negative (a failed try taken back)."""
    done = [0]
    if out.json_mode or not out.stderr_is_tty:
        last = [time.monotonic()]

        def plain(n: int) -> None:
            done[0] += n
            now = time.monotonic()
            if not out.json_mode and now - last[0] >= PLAIN_EVERY:
                last[0] = now
                out.stderr.write(f"progress: {label} {done[0]:,}/{_of(total)} bytes\n")
                out.stderr.flush()

        yield plain
        return
    from rich.progress import (
        BarColumn,
        DownloadColumn,
        Progress,
        TextColumn,
        TimeRemainingColumn,
        TransferSpeedColumn,
    )

    bar = Progress(
        TextColumn(label, style="bold", markup=False),
        BarColumn(),
        DownloadColumn(),
        TransferSpeedColumn(),
        TimeRemainingColumn(),
        console=out.err_console,
    )
    task = bar.add_task(label, total=total)
    with bar:
        yield lambda n: bar.advance(task, n)


def _of(total: int | None) -> str:
    return "?" if total is None else f"{total:,}"
