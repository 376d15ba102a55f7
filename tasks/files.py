"""Writing files so that a crash never leaves a partial file under its final name, and
temporaries that the next run finds: each is named `.NAME.<pid>.tmp`, under the data dir,
and `warehouse.db.remove_stale_temp` removes those whose process is gone."""

from __future__ import annotations

import contextlib
import os
import stat
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

__all__ = ["FileTooLarge", "read_bounded", "temp_dir", "write_atomic"]


class FileTooLarge(ValueError):
    """A file past a reader's size limit, or not a regular file; the message names it."""


def read_bounded(path: Path, limit: int) -> bytes:
    """The bytes of `path`, a regular file of at most `limit` bytes. Otherwise `FileTooLarge`:
    `/dev/zero`, a FIFO or a huge file is refused, never read until memory runs out."""
    if not stat.S_ISREG(path.stat().st_mode):  # before opening: opening a FIFO blocks
        raise FileTooLarge(f"{path}: not a regular file")
    with path.open("rb") as handle:
        data = handle.read(limit + 1)
    if len(data) > limit:
        raise FileTooLarge(f"{path}: larger than {limit:,} bytes")
    return data


def write_atomic(path: Path, data: bytes) -> None:
    """Write to a temporary file in the same folder, then `os.replace` it into place."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".", suffix=f".{os.getpid()}.tmp")
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


@contextmanager
def temp_dir(data_dir: Path, purpose: str) -> Iterator[str]:
    """A temporary folder under `data_dir/tmp` (unpacked e-prints: hostile sources stay
    inside the data dir), removed when the block ends, or by the next run's sweep when this
    process is killed. The folders made for it go too, if nothing else is in them (`lilo
    clean PATH` leaves no data dir behind)."""
    root = data_dir / "tmp"
    made = [path for path in (data_dir, root) if not path.exists()]
    root.mkdir(parents=True, exist_ok=True)
    try:
        with tempfile.TemporaryDirectory(
            prefix=f".{purpose}-", suffix=f".{os.getpid()}.tmp", dir=root
        ) as tmp:
            yield tmp
    finally:
        for path in reversed(made):
            with contextlib.suppress(OSError):  # not empty: another process uses it
                path.rmdir()
