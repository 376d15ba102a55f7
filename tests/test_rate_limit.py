"""The per-endpoint rate limit: requests and tokens per minute over a sliding
window, on a fake clock."""

from __future__ import annotations

import pytest

from lilo.tasks.llm import limits
from lilo.tasks.llm.limits import RateLimit


@pytest.fixture
def clock(monkeypatch) -> list[float]:
    now = [1000.0]
    monkeypatch.setattr(limits.time, "monotonic", lambda: now[0])
    monkeypatch.setattr(limits.time, "sleep", lambda s: now.__setitem__(0, now[0] + s))
    return now


def test_requests_per_minute_wait_for_the_oldest_to_leave_the_window(clock):
    limit = RateLimit(rpm=3, tpm=0)
    for _ in range(3):
        limit.acquire(10)
    assert clock[0] == 1000.0
    limit.acquire(10)  # the fourth waits until the first is a minute old
    assert clock[0] == pytest.approx(1060.0)


def test_tokens_per_minute_count_the_real_tokens_once_known(clock):
    limit = RateLimit(rpm=0, tpm=1000)
    first = limit.acquire(100)  # an estimate of the prompt
    limit.settle(first, 900)  # prompt and reply, as the endpoint counted them
    limit.acquire(50)  # 950 <= 1000: at once
    assert clock[0] == 1000.0
    limit.acquire(200)  # would pass 1000: waits for the first to leave the window
    assert clock[0] == pytest.approx(1060.0)


def test_no_limit_never_waits(clock):
    limit = RateLimit(rpm=0, tpm=0)
    for _ in range(100):
        limit.acquire(10_000)
    assert clock[0] == 1000.0
