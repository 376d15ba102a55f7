"""The offline engine's worker processes: one pool per lilo process, started at the first
call and ended at exit, or with the process when it is killed. Replies are pure functions
of the messages and the engine's settings, so any worker gives the same one. Where no child process
can be started (a daemonic Dask worker, or a pool that died) the reply is computed in the
calling thread instead."""

from __future__ import annotations

import functools
import multiprocessing
import os
import threading
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool

from lilo.tasks.config import OfflineSettings
from lilo.tasks.lifetime import end_with_parent, on_stop, raise_if_stopping
from lilo.tasks.llm.types import Completion, Message

__all__ = ["complete"]

_POOL: ProcessPoolExecutor | None = None
_LOCK = threading.Lock()


def complete(offline: OfflineSettings, offline_json: str, messages: list[Message]) -> Completion:
    """The reply, from a worker process (in this thread where there can be none).
    `offline_json` is `offline` as the workers receive it, serialized once by the caller."""
    pool = _pool(offline.processes)
    if pool is not None:
        try:
            return pool.submit(_reply, offline_json, messages).result()
        except BrokenProcessPool:  # a worker was killed: the next call starts a new pool
            _drop(pool)
            raise_if_stopping()  # ended by a stopping run: no reply computed here either
    from lilo.tasks.llm.offline._reply import reply

    return reply(messages, offline)


def _pool(processes: int) -> ProcessPoolExecutor | None:
    global _POOL
    if multiprocessing.current_process().daemon:  # daemonic processes have no children
        return None
    with _LOCK:
        if _POOL is None:
            # spawn: a clean interpreter, whatever threads (torch, Prefect) this one runs.
            _POOL = ProcessPoolExecutor(
                processes,
                mp_context=multiprocessing.get_context("spawn"),
                initializer=end_with_parent,
                initargs=(os.getpid(),),
            )
            on_stop(functools.partial(_end, _POOL))
        return _POOL


def _drop(pool: ProcessPoolExecutor) -> None:
    global _POOL
    with _LOCK:
        if _POOL is pool:
            _POOL = None
    pool.shutdown(wait=False, cancel_futures=True)


def _end(pool: ProcessPoolExecutor) -> None:
    """A stopping run's workers end now, their replies abandoned."""
    processes = list((pool._processes or {}).values())  # the stdlib has no public handle
    _drop(pool)
    for process in processes:
        process.kill()


@functools.lru_cache(maxsize=8)
def _settings(offline_json: str) -> OfflineSettings:
    return OfflineSettings.model_validate_json(offline_json)


def _reply(offline_json: str, messages: list[Message]) -> Completion:
    from lilo.tasks.llm.offline._reply import reply

    return reply(messages, _settings(offline_json))
