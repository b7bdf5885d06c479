"""A child process's output read on a thread of its own, so a test never blocks on a pipe.

A blocking ``readline()`` / ``read()`` on a child's pipe hangs a test when the child says
nothing, holds the pipe open through a grandchild, or lets ``select`` and Python's line
buffer disagree (issue 43: a hang of 11 minutes inside an assert message). ``Drained``
collects every line as it comes; waits are bounded and the text so far is always there
for a failure's message. Imports nothing from the project.
"""

from __future__ import annotations

import contextlib
import re
import subprocess
import threading
import time
from typing import IO, Any


class Drained:
    """Every line of ``stream``, collected on a daemon thread until end of file."""

    def __init__(self, stream: IO[str] | None) -> None:
        self._lines: list[str] = []
        self._done = False
        self._changed = threading.Condition()
        if stream is None:
            self._done = True
            return
        threading.Thread(target=self._pump, args=(stream,), daemon=True).start()

    def _pump(self, stream: IO[str]) -> None:
        try:
            for line in stream:
                with self._changed:
                    self._lines.append(line)
                    self._changed.notify_all()
        except (OSError, ValueError):  # the pipe closed under us (the test is tearing down)
            pass
        finally:
            with self._changed:
                self._done = True
                self._changed.notify_all()

    def text(self) -> str:
        """What the child wrote so far (never waits)."""
        with self._changed:
            return "".join(self._lines)

    def wait_for(self, pattern: str | re.Pattern[str], timeout: float) -> re.Match[str]:
        """The first line matching ``pattern``, waiting at most ``timeout`` seconds; an
        AssertionError with everything read so far when it does not come."""
        regex = re.compile(pattern) if isinstance(pattern, str) else pattern
        deadline = time.monotonic() + timeout
        seen = 0
        with self._changed:
            while True:
                for line in self._lines[seen:]:
                    if found := regex.search(line):
                        return found
                seen = len(self._lines)
                left = deadline - time.monotonic()
                if self._done or left <= 0:
                    why = "ended" if self._done else f"said nothing like it in {timeout:g}s"
                    raise AssertionError(
                        f"waited for {regex.pattern!r}; the output {why}:\n{''.join(self._lines)}"
                    )
                self._changed.wait(min(left, 1.0))

    def wait_closed(self, timeout: float) -> bool:
        """Whether the stream reached its end within ``timeout`` seconds."""
        deadline = time.monotonic() + timeout
        with self._changed:
            while not self._done and (left := deadline - time.monotonic()) > 0:
                self._changed.wait(left)
            return self._done


class Child:
    """``subprocess.Popen`` with both pipes drained (``.out``, ``.err``); killed on exit
    from its ``with`` block if it still runs."""

    def __init__(self, command: list[str], **popen: Any) -> None:
        popen.setdefault("stdout", subprocess.PIPE)
        popen.setdefault("stderr", subprocess.PIPE)
        self.proc: subprocess.Popen[str] = subprocess.Popen(command, text=True, **popen)
        self.out = Drained(self.proc.stdout)
        self.err = Drained(self.proc.stderr)

    def output(self) -> str:
        """Both streams so far, for a failure's message."""
        return f"stdout:\n{self.out.text()}\nstderr:\n{self.err.text()}"

    def __enter__(self) -> Child:
        return self

    def __exit__(self, *exc: object) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
        with contextlib.suppress(subprocess.TimeoutExpired):  # the kernel owes us this
            self.proc.wait(10)


def leftover(proc: subprocess.Popen[str]) -> str:
    """What a child that has exited left on its stderr pipe, read for at most 5 s (a
    grandchild may still hold the pipe open): for a failure's message."""
    try:
        return proc.communicate(timeout=5)[1] or ""
    except subprocess.TimeoutExpired:
        return "(its stderr is still held open by another process)"
