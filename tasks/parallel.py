"""Fan-out inside a coarse task: Prefect tasks cost milliseconds each (DESIGN §13), so a
task handles a batch and spreads the I/O-bound work (LLM calls) over threads."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from typing import TypeVar

__all__ = ["fan_out", "map_threads"]

T = TypeVar("T")
R = TypeVar("R")


def map_threads(fn: Callable[[T], R], items: Sequence[T], workers: int) -> list[R]:
    """`[fn(x) for x in items]` on up to `workers` threads, results in input order."""
    if workers <= 1 or len(items) <= 1:
        return [fn(item) for item in items]
    with ThreadPoolExecutor(max_workers=min(workers, len(items))) as pool:
        return list(pool.map(fn, items))


def fan_out(
    fn: Callable[[T], R],
    items: Sequence[T],
    workers: int,
    on_done: Callable[[list[tuple[T, R]]], None],
    every_s: float = 1.0,
) -> None:
    """`fn` over every item on up to `workers` threads; `on_done` gets the finished
    (item, result) pairs on the calling thread as they finish (waiting at most `every_s`
    for each group), so the caller writes results as units finish without sharing its
    connection with the threads. An exception in `fn` propagates once the running ones
    end."""
    if not items:
        return
    with ThreadPoolExecutor(max_workers=max(1, min(workers, len(items)))) as pool:
        futures: dict[Future[R], T] = {pool.submit(fn, item): item for item in items}
        pending = set(futures)
        while pending:
            done, pending = wait(pending, timeout=every_s, return_when=FIRST_COMPLETED)
            finished = [(futures[f], f.result()) for f in done]
            if finished:
                on_done(finished)
