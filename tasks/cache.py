"""A content-addressed on-disk store: the LLM and embedding caches.

Keyed by a sha256 of everything that determines an output (backend, model, parameters,
messages; retries and timeouts excluded). Entries are written atomically (a temporary in
the data dir's `tmp/`, then renamed: tasks/files.py), so any thread, process or worker
sharing the folder can read and write it and a crash never leaves a half entry. An entry
that cannot be trusted on reading (larger than its reader allows, no JSON) is a miss: made
again and replaced. The flow copies new LLM entries into the warehouse's `llm_cache` table,
where analysts query them.
"""

from __future__ import annotations

import contextlib
import fcntl  # POSIX only: lilo runs on Linux and macOS (README.md)
import hashlib
import json
import logging
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from lilo.tasks.files import write_atomic

__all__ = ["DiskCache", "cache_key", "canonical_json"]

log = logging.getLogger(__name__)


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

    def path(self, key: str, suffix: str = ".json") -> Path:
        """Where the entry `key` with `suffix` is (or would be) kept."""
        return self.root / key[:2] / f"{key}{suffix}"

    def get_bytes(
        self, key: str, suffix: str = ".json", max_bytes: int | None = None
    ) -> bytes | None:
        """The entry, or None when there is none or it is larger than `max_bytes` (a miss,
        so the caller computes it again and replaces it)."""
        path = self.path(key, suffix)
        try:
            with path.open("rb") as file:
                size = os.fstat(file.fileno()).st_size
                if max_bytes is not None and size > max_bytes:
                    log.warning(
                        "cache entry %s is %s bytes, over %s: made again", path, size, max_bytes
                    )
                    return None
                return file.read()
        except FileNotFoundError:
            return None

    def put_bytes(self, key: str, data: bytes, suffix: str = ".json") -> None:
        write_atomic(self.path(key, suffix), data, self.data_dir)

    def get_json(self, key: str, max_bytes: int | None = None) -> Any | None:
        """The entry's JSON, or None as `get_bytes` says or when it is no JSON."""
        data = self.get_bytes(key, max_bytes=max_bytes)
        if data is None:
            return None
        try:
            return json.loads(data)
        except ValueError:  # cut short, not UTF-8: no entry lilo wrote (it writes atomically)
            log.warning("cache entry %s is no JSON: made again", self.path(key, ".json"))
            return None

    @contextlib.contextmanager
    def claim(self, key: str) -> Iterator[None]:
        """Holds `key` against the other processes sharing this folder (Dask workers, a
        second run) until the block ends, by an OS lock on a file beside the entry: one
        computes while the others wait, then finds the entry. The holder removes the file
        before letting go, so a waiter may lock a removed file and a newcomer a new one:
        both look in the cache first, and find what the holder wrote."""
        path = self.path(key, ".lock")
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
