from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any
from unittest import mock

import pytest
import respx
from typer.testing import CliRunner

from osmosis_cli.main import main
from tests import envelopes
from tests.conftest import PLATFORM


@dataclass
class Result:
    exit_code: int
    stdout: str
    stderr: str

    def json(self) -> Any:
        """The stdout envelope (checked)."""
        return envelopes.stdout_document(self.stdout)

    def data(self) -> Any:
        document = self.json()
        assert envelopes.kind(document) == "detail", document
        return document["data"]

    def items(self) -> list[Any]:
        document = self.json()
        assert envelopes.kind(document) == "list", document
        return document["items"]  # type: ignore[no-any-return]

    def resource(self) -> Any:
        document = self.json()
        assert envelopes.kind(document) == "operation", document
        return document.get("resource", {})

    def error(self) -> dict[str, Any]:
        """The error envelope's ``error`` on stderr."""
        return envelopes.error_of(self.stderr)


Invoke = Callable[..., Result]


@pytest.fixture
def invoke() -> Invoke:
    """Run the CLI through its real entry point (global options, usage errors, exits)."""
    runner = CliRunner()

    def run(*args: str, input: str | None = None) -> Result:
        with runner.isolation(input=input) as (stdout, stderr, _):
            try:
                with mock.patch.dict(os.environ):  # a .env the CLI loads stays in the call
                    main(list(args))
                code = 0
            except SystemExit as exc:
                code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
            out, err = stdout.getvalue().decode(), stderr.getvalue().decode()
        return Result(code, out, err)

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


from tests.conftest import QUICKSTART, quickstart_project  # noqa: E402, F401 - shared
