"""Retries in step: the LLM client's retry waits are jittered (full jitter, tasks/backoff.py),
so threads refused together by a 429 come back at different instants; a Retry-After the
server sends is still waited at least."""

from __future__ import annotations

import random
import threading
from pathlib import Path

import pytest
from llm_server import LLMServer

from lilo.tasks.backoff import BAD_REPLY
from lilo.tasks.llm.openai_backend import OpenAIBackend

THREADS = 8
SEED = 11  # its shortest draw of 8 (0.09 s) comes after the whole burst


class _Top(random.Random):
    """The old rule as an RNG: every draw the top of its range (the unjittered wait)."""

    def uniform(self, a: float, b: float) -> float:
        return b


def _burst(tmp_path: Path, rng: random.Random, retry_after: str | None) -> list[tuple[str, float]]:
    """Each request's prompt and arrival time: `THREADS` concurrent asks, each first ask
    refused with a 429."""
    with LLMServer() as server:
        backend = OpenAIBackend(server.settings(tmp_path, **{"llm.retries": 2}).llm)
        backend.complete([{"role": "user", "content": "warm"}], temperature=0.0, max_tokens=None)
        server.requests.clear()
        server.arrivals.clear()
        server.refuse_first = 429
        server.retry_after = retry_after
        backend.rng = rng
        start = threading.Barrier(THREADS)
        replies: list[str] = []

        def ask(i: int) -> None:
            start.wait()
            reply = backend.complete(
                [{"role": "user", "content": f"q{i}"}], temperature=0.0, max_tokens=None
            )
            replies.append(reply.text)

        threads = [threading.Thread(target=ask, args=(i,)) for i in range(THREADS)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        assert sorted(replies) == sorted(f"echo: q{i}" for i in range(THREADS))
        prompts = [r["messages"][-1]["content"] for r in server.requests]
        return list(zip(prompts, server.arrivals, strict=True))


def _spread(times: list[float]) -> float:
    return max(times) - min(times)


def _waits(arrivals: list[tuple[str, float]]) -> list[float]:
    """Each thread's wait: its retry's arrival less its first ask's, each first ask refused."""
    first: dict[str, float] = {}
    waits = []
    for prompt, at in arrivals:
        if prompt in first:
            waits.append(at - first[prompt])
        first.setdefault(prompt, at)
    assert len(first) == THREADS and len(waits) == THREADS
    return sorted(waits)


def test_retries_after_a_burst_of_429s_are_spread(tmp_path: Path) -> None:
    seeded = random.Random(SEED)
    draws = sorted(seeded.uniform(0.0, BAD_REPLY.wait_s(0)) for _ in range(THREADS))
    assert draws[0] > 0.05  # the seed's shortest wait comes after the whole burst

    old = _burst(tmp_path / "old", _Top(), None)
    new = _burst(tmp_path / "new", random.Random(SEED), None)
    old_waits, new_waits = _waits(old), _waits(new)
    burst = _spread([at for _, at in new[:THREADS]])  # the first 8 to arrive
    old_spread = _spread([at for _, at in old[THREADS:]])
    new_spread = _spread([at for _, at in new[THREADS:]])
    print(
        f"burst {burst:.3f} s; retries' arrivals span: old rule {old_spread:.3f} s, "
        f"full jitter {new_spread:.3f} s; waits span: old {_spread(old_waits):.3f} s, "
        f"jitter {_spread(new_waits):.3f} s (drawn {draws[-1] - draws[0]:.3f} s)"
    )
    assert _spread(new_waits) > 2 * _spread(old_waits)  # the old rule keeps them in step
    assert new_waits == pytest.approx(draws, abs=0.2)  # each back after its own draw
    assert _spread(new_waits) > 0.2  # the draws, not the burst, set when each comes back


def test_a_retry_after_is_waited_at_least(tmp_path: Path) -> None:
    arrivals = _burst(tmp_path, random.Random(SEED), "0.6")
    assert min(_waits(arrivals)) >= 0.6  # the server's wait, not a draw under it
