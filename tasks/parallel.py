"""Fan-out inside a coarse task: Prefect tasks cost milliseconds each (docs/design.md §13), so a
task handles a batch and spreads the I/O-bound work (LLM calls) over threads, and CPU-bound
work on untrusted input (cleaning) over child processes that can be stopped."""

from __future__ import annotations

import multiprocessing
import os
import queue
import signal
import time
from collections import deque
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import contextmanager
from multiprocessing.connection import Connection, wait
from typing import Any, NoReturn, TypeVar

from lilo.tasks.lifetime import end_with_parent, interrupt_signal, raise_if_stopping, stop

__all__ = ["fan_out", "map_processes", "map_threads"]

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
    with ten thousand units as with ten. An interrupt (Ctrl-C, SIGTERM) stops the run: the
    units that finished still go to `on_done`, no queued unit starts and the running ones
    are not waited for (tasks/lifetime.py)."""
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
            done: list[Future[R]] = []
            try:
                done.append(finished.get())
                deadline = time.monotonic() + every_s
                while len(done) < left and (wait := deadline - time.monotonic()) > 0:
                    try:
                        done.append(finished.get(timeout=wait))
                    except queue.Empty:
                        break
            except BaseException as interrupt:
                _hand_over_finished(done, finished, futures, on_done, interrupt)
            left -= len(done)
            on_done([(futures[f], f.result()) for f in done])


def _hand_over_finished(
    done: list[Future[R]],
    finished: queue.SimpleQueue[Future[R]],
    futures: dict[Future[R], T],
    on_done: Callable[[list[tuple[T, R]]], None],
    interrupt: BaseException,
) -> NoReturn:
    """An interrupt while `fan_out` waits: the units that finished (those gathered for the
    next hand-over and those queued since) still go to `on_done`, so a stop never loses
    finished work; then the interrupt goes on (an error in `on_done` gives way to it)."""
    while True:
        try:
            done.append(finished.get_nowait())
        except queue.Empty:
            break
    ready = [(futures[f], f.result()) for f in done if not f.cancelled() and not f.exception()]
    try:
        if ready:
            on_done(ready)
    finally:
        raise interrupt


def map_processes(
    fn: Callable[[T], R],
    items: Sequence[T],
    workers: int,
    limit_s: float,
    on_failure: Callable[[T, str, bool], R],
) -> list[R]:
    """`[fn(x) for x in items]` in up to `workers` child processes, results in input order.
    A call that runs past `limit_s` seconds has its process killed (a thread cannot be) and
    a new one started for the rest; it, and a call that raises or whose process dies, gets
    `on_failure(item, why, timed_out)` instead. `fn` must pickle (a module-level function or
    a partial of one). In a daemonic process, which may have no children, the calls run
    here, unbounded.
    """
    if multiprocessing.current_process().daemon:
        return [_call(fn, item, on_failure) for item in items]
    results: list[Any] = [None] * len(items)
    todo = deque(range(len(items)))
    starting: list[_Worker] = []
    idle: list[_Worker] = []
    busy: dict[Connection, tuple[_Worker, int, float]] = {}
    try:
        starting = [_Worker(fn) for _ in range(max(1, min(workers, len(items))))]
        while todo or busy:
            while idle and todo:
                worker, index = idle.pop(), todo.popleft()
                worker.conn.send(items[index])
                busy[worker.conn] = (worker, index, time.monotonic() + limit_s)
            waiting = [w.conn for w in starting] + list(busy)
            deadline = min((d for _, _, d in busy.values()), default=time.monotonic() + 1.0)
            for conn in wait(waiting, timeout=max(0.0, deadline - time.monotonic())):
                ready = next((w for w in starting if w.conn is conn), None)
                if ready is not None:
                    starting.remove(ready)
                    if ready.ready():
                        idle.append(ready)
                    elif not starting and not idle and not busy:
                        raise RuntimeError(f"worker process failed to start: {ready.exit()}")
                    continue
                worker, index, _ = busy.pop(conn)  # type: ignore[call-overload]  # wait() gives back the Connections it was given
                ok, value = worker.result()
                results[index] = value if ok else on_failure(items[index], value, False)
                if not worker.dead:
                    idle.append(worker)
                    continue
                worker.stop()  # killed (out of memory?): a new one takes the rest
                if todo:
                    starting.append(_Worker(fn))
            now = time.monotonic()
            for conn, (worker, index, deadline) in list(busy.items()):
                if deadline <= now:
                    del busy[conn]
                    worker.stop()
                    why = f"ran past {limit_s:g} s; its process was stopped"
                    results[index] = on_failure(items[index], why, True)
                    if todo:
                        starting.append(_Worker(fn))
    finally:
        for worker in [*starting, *idle, *(w for w, _, _ in busy.values())]:
            worker.stop()
    return results


def _call(fn: Callable[[T], R], item: T, on_failure: Callable[[T, str, bool], R]) -> R:
    try:
        return fn(item)
    except Exception as exc:
        return on_failure(item, f"{type(exc).__name__}: {exc}", False)


class _Worker:
    """A spawned process that says it is ready, then answers each item sent with
    (True, fn(item)) or (False, why)."""

    def __init__(self, fn: Callable[[Any], Any]) -> None:
        # spawn: a clean interpreter, whatever threads (Prefect, torch) this one runs.
        context = multiprocessing.get_context("spawn")
        self.conn, child = context.Pipe()
        self.process = context.Process(
            target=_serve, args=(child, fn, os.getpid()), daemon=True, name="lilo-worker"
        )
        self.process.start()
        child.close()
        self.dead = False

    def ready(self) -> bool:
        return self.result()[0]

    def result(self) -> tuple[bool, Any]:
        try:
            return self.conn.recv()
        except (EOFError, OSError):
            self.dead = True
            return False, f"its process died ({self.exit()}): out of memory?"

    def exit(self) -> str:
        self.process.join(1.0)
        return f"exit code {self.process.exitcode}"

    def stop(self) -> None:
        self.process.kill()
        self.process.join()
        self.conn.close()


def _serve(conn: Connection, fn: Callable[[Any], Any], parent: int) -> None:
    end_with_parent(parent)
    conn.send((True, None))
    while True:
        try:
            item = conn.recv()
        except EOFError:
            return
        try:
            conn.send((True, fn(item)))
        except Exception as exc:
            conn.send((False, f"{type(exc).__name__}: {exc}"))


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
