from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import pytest
import respx
from typer.testing import CliRunner

from osmosis_cli.main import app
from tests.conftest import PLATFORM


@dataclass
class Result:
    exit_code: int
    stdout: str
    stderr: str

    def json(self) -> Any:
        return json.loads(self.stdout)


Invoke = Callable[..., Result]


@pytest.fixture
def invoke() -> Invoke:
    runner = CliRunner()

    def run(*args: str, input: str | None = None) -> Result:
        result = runner.invoke(app, list(args), input=input, catch_exceptions=False)
        return Result(result.exit_code, result.stdout, result.stderr)

    return run


@pytest.fixture
def router() -> Iterator[respx.MockRouter]:
    with respx.mock(base_url=PLATFORM, assert_all_called=False) as mock:
        yield mock


USER = {"id": "u1", "email": "ada@example.com", "name": "Ada"}
ACME = {
    "id": "w1",
    "name": "acme",
    "role": "admin",
    "connected_repo": {"repo_full_name": "org/repo"},
}
BETA = {"id": "w2", "name": "beta", "role": "member", "connected_repo": None}
