"""Test doubles shared by the suites: an in-memory keyring and a fake clock."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

from keyring.backend import KeyringBackend
from keyring.errors import PasswordDeleteError

T = TypeVar("T")


class MemoryKeyring(KeyringBackend):
    """A keyring that lives in a dict: tests never touch the user's real keyring."""

    priority = 10  # type: ignore[assignment]

    def __init__(self) -> None:
        super().__init__()
        self.items: dict[tuple[str, str], str] = {}

    def get_password(self, service: str, username: str) -> str | None:
        return self.items.get((service, username))

    def set_password(self, service: str, username: str, password: str) -> None:
        self.items[(service, username)] = password

    def delete_password(self, service: str, username: str) -> None:
        if self.items.pop((service, username), None) is None:
            raise PasswordDeleteError(username)


class BrokenKeyring(MemoryKeyring):
    """A keyring whose every call fails (locked, no D-Bus, …)."""

    def set_password(self, service: str, username: str, password: str) -> None:
        raise RuntimeError("keyring locked")

    def get_password(self, service: str, username: str) -> str | None:
        raise RuntimeError("keyring locked")


class FakeClock:
    """monotonic()/sleep() that only move when the code under test sleeps."""

    def __init__(self, start: float = 1000.0) -> None:
        self.now = start
        self.sleeps: list[float] = []

    def monotonic(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.sleeps.append(seconds)
        self.now += seconds

    async def asleep(self, seconds: float) -> None:
        self.sleep(seconds)


def run_maybe_async(value: T | Awaitable[T]) -> T:
    if asyncio.iscoroutine(value) or isinstance(value, Awaitable):
        return asyncio.run(_await(value))  # type: ignore[arg-type]
    return value  # type: ignore[return-value]


async def _await(value: Awaitable[T]) -> T:
    return await value


Maker = Callable[..., Any]


def run_cli(*args: str) -> tuple[int, str, str]:
    """The CLI through its entry point, in this process: (exit code, stdout, stderr)."""
    from typer.testing import CliRunner

    from osmosis_cli.main import main

    with CliRunner().isolation() as (out, err, _):
        try:
            main(list(args))
            code = 0
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else 0
        return code, out.getvalue().decode(), err.getvalue().decode()


def quickstart_run(limit: int) -> list[str]:
    """``osmosis eval run`` of the quickstart example on the mock calculator, quiet, over
    its first ``limit`` rows: the run the CLI tests make and then look at."""
    return [
        "eval",
        "run",
        "configs/eval/quickstart.toml",
        "--model",
        "mock/calculator",
        "-q",
        "--limit",
        str(limit),
    ]


#: the quickstart example's suite, one row an entry, into .osmosis/suites/sweep
SUITE_RUN = [
    "eval",
    "run",
    "configs/eval/suite.toml",
    "--limit",
    "1",
    "-q",
    "-o",
    ".osmosis/suites/sweep",
]
