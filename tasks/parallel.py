"""Fan-out inside a coarse task: Prefect tasks cost milliseconds each (DESIGN §13), so a
task handles a batch and spreads the I/O-bound work (LLM calls) over threads."""

from __future__ import annotations

import queue
import signal
import time
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import contextmanager
from typing import TypeVar

from tasks.lifetime import interrupt_signal, raise_if_stopping, stop

__all__ = ["fan_out", "map_threads"]

T = TypeVar("T")
R = TypeVar("R")


def map_threads(fn: Callable[[T], R], items: Sequence[T], workers: int) -> list[R]:
    """`[fn(x) for x in items]` on up to `workers` threads, results in input order."""
    if workers <= 1 or len(items) <= 1:
        return [fn(item) for item in items]
    pool = ThreadPoolExecutor(max_workers=min(workers, len(items)))
    with _stopping_on_interrupt(pool):
        return list(pool.map(_unit(fn), items))


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
    with ten thousand units as with ten. An interrupt (Ctrl-C, SIGTERM) stops the run: no
    queued unit starts and the running ones are not waited for (tasks/lifetime.py)."""
    if not items:
        return
    finished: queue.SimpleQueue[Future[R]] = queue.SimpleQueue()
    pool = ThreadPoolExecutor(max_workers=max(1, min(workers, len(items))))
    with _stopping_on_interrupt(pool):
        futures: dict[Future[R], T] = {}
        run = _unit(fn)
        for item in items:
            future = pool.submit(run, item)
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


def _unit(fn: Callable[[T], R]) -> Callable[[T], R]:
    """`fn`, not started once the run is stopping."""

    def run(item: T) -> R:
        raise_if_stopping()
        return fn(item)

    return run


@contextmanager
def _stopping_on_interrupt(pool: ThreadPoolExecutor) -> Iterator[None]:
    """The pool's end: its units waited for, unless the caller is interrupted (a signal, not
    an error): then the run stops and the units left are cancelled, not waited for."""
    try:
        yield
    except Exception:
        pool.shutdown(wait=True)
        raise
    except BaseException as exc:
        stop(interrupt_signal(exc) or signal.SIGINT)
        pool.shutdown(wait=False, cancel_futures=True)
        raise
    pool.shutdown(wait=True)
