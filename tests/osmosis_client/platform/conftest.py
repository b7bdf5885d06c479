from __future__ import annotations

import random
from collections.abc import Callable, Iterator
from typing import Any

import pytest
import respx

from osmosis_client import AsyncClient, Client, RetryPolicy
from tests.conftest import PLATFORM
from tests.helpers import FakeClock, run_maybe_async


class Api:
    """One client face (sync or async) with a fake clock; ``call`` runs either alike."""

    def __init__(self, kind: str, clock: FakeClock, **kwargs: Any) -> None:
        self.kind = kind
        self.clock = clock
        policy = RetryPolicy(rng=random.Random(0), wall_clock=lambda: 1_700_000_000.0)
        opts: dict[str, Any] = {"base_url": PLATFORM, "retry_policy": policy, **kwargs}
        if kind == "sync":
            self.client: Client | AsyncClient = Client(sleep=clock.sleep, **opts)
        else:
            self.client = AsyncClient(sleep=clock.asleep, **opts)

    def call(self, fn: Callable[[Any], Any]) -> Any:
        if self.kind == "sync":
            return fn(self.client)

        async def go() -> Any:
            return await fn(self.client)

        return run_maybe_async(go())


@pytest.fixture(params=["sync", "async"])
def make_api(request: pytest.FixtureRequest, clock: FakeClock) -> Callable[..., Api]:
    def make(**kwargs: Any) -> Api:
        return Api(request.param, clock, **kwargs)

    return make


@pytest.fixture
def router() -> Iterator[respx.MockRouter]:
    with respx.mock(base_url=PLATFORM, assert_all_called=False) as mock:
        yield mock
