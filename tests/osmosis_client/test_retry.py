from __future__ import annotations

import random
from datetime import datetime, timedelta, timezone
from email.utils import format_datetime

import pytest

from osmosis_client._retry import RetryPolicy, parse_retry_after


def test_retry_after_seconds() -> None:
    assert parse_retry_after("7") == 7.0
    assert parse_retry_after("1.5") == 1.5
    assert parse_retry_after("-3") == 0.0


def test_retry_after_http_date() -> None:
    now = datetime(2026, 1, 1, tzinfo=timezone.utc)
    header = format_datetime(now + timedelta(seconds=12), usegmt=True)
    assert parse_retry_after(header, now=now.timestamp()) == pytest.approx(12.0)


@pytest.mark.parametrize("junk", ["", "soon", "nan", "inf", None])
def test_unparseable_retry_after_is_ignored(junk: str | None) -> None:
    assert parse_retry_after(junk) is None


def test_full_jitter_stays_within_exponential_ceiling() -> None:
    policy = RetryPolicy(rng=random.Random(1))
    for retries_done in range(8):
        ceiling = min(30.0, 0.5 * 2**retries_done)
        delays = [policy.backoff(retries_done) for _ in range(200)]
        assert all(0.0 <= d <= ceiling for d in delays)
        assert max(delays) > ceiling * 0.8  # really spread, not a constant


def test_gives_up_after_max_retries() -> None:
    policy = RetryPolicy(max_retries=4)
    assert policy.next_delay(3, status=503) is not None
    assert policy.next_delay(4, status=503) is None


@pytest.mark.parametrize("status", [400, 401, 403, 404, 409, 422, 426])
def test_other_4xx_are_never_retried(status: int) -> None:
    assert RetryPolicy().next_delay(0, status=status) is None


@pytest.mark.parametrize("status", [408, 429, 500, 502, 503, 504])
def test_retryable_statuses(status: int) -> None:
    assert RetryPolicy().next_delay(0, status=status) is not None


def test_retry_after_wins_over_backoff() -> None:
    assert RetryPolicy().next_delay(0, status=429, retry_after="9") == 9.0


def test_elapsed_budget_caps_retries() -> None:
    policy = RetryPolicy(max_elapsed=60.0)
    assert policy.next_delay(0, status=503, retry_after="10", elapsed=49.0) == 10.0
    assert policy.next_delay(0, status=503, retry_after="10", elapsed=55.0) is None
