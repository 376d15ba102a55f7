"""Fan-out inside a coarse task: Prefect tasks cost milliseconds each (DESIGN §13), so a
task handles a batch and spreads the I/O-bound work (LLM calls) over threads."""

from __future__ import annotations

import queue
import time
from collections.abc import Callable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
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
    (item, result) pairs on the calling thread as they finish (those that finish within
    `every_s` of the first come together), so the caller writes results as units finish
    without sharing its connection with the threads. An exception in `fn` propagates once
    the running ones end. Each unit reports its end on a queue: waiting costs the same
    with ten thousand units as with ten."""
    if not items:
        return
    finished: queue.SimpleQueue[Future[R]] = queue.SimpleQueue()
    with ThreadPoolExecutor(max_workers=max(1, min(workers, len(items)))) as pool:
        futures: dict[Future[R], T] = {}
        for item in items:
            future = pool.submit(fn, item)
            futures[future] = item
            future.add_done_callback(finished.put)
        left = len(futures)
        while left:
            done = [finished.get()]
            deadline = time.monotonic() + every_s
            while len(done) < left and (wait := deadline - time.monotonic()) > 0:
                try:
                    done.append(finished.get(timeout=wait))
                except queue.Empty:
                    break
            left -= len(done)
            on_done([(futures[f], f.result()) for f in done])
