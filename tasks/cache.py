"""A content-addressed on-disk store: the LLM and embedding caches.

Keyed by a sha256 of everything that determines an output (backend, model, parameters,
messages; retries and timeouts excluded). Entries are written atomically (a temporary in
the data dir's `tmp/`, then renamed: tasks/files.py), so any thread, process or worker
sharing the folder can read and write it and a crash never leaves a half entry. The flow
copies new LLM entries into the warehouse's `llm_cache` table, where analysts query them.
"""

from __future__ import annotations

import contextlib
import fcntl  # POSIX only: lilo runs on Linux and macOS (README.md)
import hashlib
import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from lilo.tasks.files import write_atomic

__all__ = ["DiskCache", "cache_key", "canonical_json"]


def canonical_json(payload: dict[str, Any]) -> str:
    """The one text of a payload that its key is taken from (sorted keys, no spaces)."""
    return json.dumps(payload, sort_keys=True, ensure_ascii=False, separators=(",", ":"))


def cache_key(payload: dict[str, Any] | str) -> str:
    """sha256 of the payload's canonical JSON (or of that text, already made)."""
    blob = payload if isinstance(payload, str) else canonical_json(payload)
    return hashlib.sha256(blob.encode()).hexdigest()


class DiskCache:
    def __init__(self, root: Path, data_dir: Path) -> None:
        """Entries under `root`, a folder of the data dir `data_dir`."""
        self.root = root
        self.data_dir = data_dir

    def _path(self, key: str, suffix: str) -> Path:
        return self.root / key[:2] / f"{key}{suffix}"

    def get_bytes(self, key: str, suffix: str = ".json") -> bytes | None:
        try:
            return self._path(key, suffix).read_bytes()
        except FileNotFoundError:
            return None

    def put_bytes(self, key: str, data: bytes, suffix: str = ".json") -> None:
        write_atomic(self._path(key, suffix), data, self.data_dir)

    def get_json(self, key: str) -> Any | None:
        data = self.get_bytes(key)
        return None if data is None else json.loads(data)

    @contextlib.contextmanager
    def claim(self, key: str) -> Iterator[None]:
        """Holds `key` against the other processes sharing this folder (Dask workers, a
        second run) until the block ends, by an OS lock on a file beside the entry: one
        computes while the others wait, then finds the entry. The holder removes the file
        before letting go, so a waiter may lock a removed file and a newcomer a new one:
        both look in the cache first, and find what the holder wrote."""
        path = self._path(key, ".lock")
        path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            yield
        finally:
            with contextlib.suppress(FileNotFoundError):
                path.unlink()
            os.close(fd)  # releases the lock

    def put_json(self, key: str, value: Any) -> None:
        self.put_bytes(key, json.dumps(value, ensure_ascii=False).encode())
