"""Files lilo writes under its data dir, and the temporaries it removes.

Every temporary lilo makes lives in its own folder, `DATA_DIR/tmp/`, named with its owner:
`.NAME.lilo-<machine>-<pid>-<start>.tmp` (a DuckDB copy's `.wal` beside it), where
<machine> is a hash of the host name, the boot and the pid namespace, and <start> the owning
process's start time. `remove_stale_temp` removes, in that folder only, the temporaries whose
owner is provably gone: written on this machine, this boot and this pid namespace, by a
process that no longer runs (its pid gone, or taken by a process started later). A finished
temporary is moved into place by `place`, which never writes through a link. lilo writes
only into a data dir that is its own (`claim_data_dir`)."""

from __future__ import annotations

import contextlib
import errno
import functools
import hashlib
import os
import re
import secrets
import shutil
import socket
import stat
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import BinaryIO

from lilo.tasks.errors import InputError

__all__ = [
    "FileTooLarge",
    "HardLinked",
    "LinkOutside",
    "NotLilosFolder",
    "claim_data_dir",
    "folders_to_make",
    "inside",
    "open_within",
    "pid_alive",
    "place",
    "read_bounded",
    "remove_if_empty",
    "remove_stale_temp",
    "temp_dir",
    "temp_path",
    "write_atomic",
]

TMP = "tmp"
# What lilo makes at the top of a data dir (and the file macOS's Finder leaves in any
# folder): a folder holding only these, or nothing, is one lilo may use; one that holds the
# warehouse is lilo's whatever else it holds.
WAREHOUSE = "lilo.duckdb"
_OWN_NAMES = frozenset(
    {WAREHOUSE, f"{WAREHOUSE}.wal", "published", "cache", "archives", TMP, "runs"}
    | {"data_docs", "demo-corpus", ".DS_Store"}
)
_OWNED = re.compile(r"^\..+\.lilo-([0-9a-f]{12})-(\d+)-(\d+)\.tmp(?:\.wal)?$")
_CLAIMED: set[str] = set()


class FileTooLarge(InputError):
    """A file past a reader's size limit, or not a regular file; the message names it."""


class LinkOutside(FileTooLarge):
    """A file of a folder from outside lilo (a clone) that is a link out of that folder."""


class HardLinked(FileTooLarge):
    """A file of a clone with more than one name (a hard link: it may be any file the user
    can read, from anywhere on the disk)."""


class NotLilosFolder(InputError):
    """A data dir that holds what lilo did not make, or a link where lilo writes."""


def read_bounded(
    path: Path, limit: int, within: Path | None = None, hard_links: bool = False
) -> bytes:
    """The bytes of `path`, a regular file of at most `limit` bytes. Otherwise `FileTooLarge`:
    `/dev/zero`, a FIFO or a huge file is refused, never read until memory runs out. With
    `within` (a clone), the file is opened by `open_within`."""
    if within is not None:
        handle = open_within(path, within, hard_links)
    else:
        if not stat.S_ISREG(path.stat().st_mode):  # before opening: opening a FIFO blocks
            raise FileTooLarge(f"{path}: not a regular file")
        handle = path.open("rb")
    with handle:
        data = handle.read(limit + 1)
    if len(data) > limit:
        raise FileTooLarge(f"{path}: larger than {limit:,} bytes")
    return data


def open_within(path: Path, within: Path, hard_links: bool = False) -> BinaryIO:
    """`path` opened for reading, a file of a clone: the one check every reader of a folder
    from outside lilo goes through. It must resolve inside `within` (the folder the user
    named; else `LinkOutside`), be a regular file (else `FileTooLarge`) and, unless
    `hard_links`, have one name (else `HardLinked`). The resolved file is what is opened
    and checked, so a link swapped in after the check is not followed."""
    resolved = inside(path, within).resolve()
    try:
        fd = os.open(resolved, os.O_RDONLY | os.O_NONBLOCK | os.O_NOFOLLOW)
    except OSError as exc:  # swapped for a link since, or unreadable
        raise FileTooLarge(f"{path}: cannot be opened ({exc.strerror})") from exc
    info = os.fstat(fd)
    if stat.S_ISREG(info.st_mode) and (info.st_nlink == 1 or hard_links):
        return os.fdopen(fd, "rb")
    os.close(fd)
    if not stat.S_ISREG(info.st_mode):
        raise FileTooLarge(f"{path}: not a regular file")
    raise HardLinked(
        f"{path}: a hard link ({info.st_nlink} names, any file of the disk may be one)"
    )


def inside(path: Path, folder: Path) -> Path:
    """`path`, a file or folder of `folder` (a clone: from outside lilo), once it is clear
    that it resolves inside `folder`; a link out of it is `LinkOutside` naming where it
    leads."""
    resolved = path.resolve()
    if not resolved.is_relative_to(folder.resolve()):
        raise LinkOutside(f"{path}: a link out of {folder.name}/ (to {resolved})")
    return path


# -- the data dir ----------------------------------------------------------------------
def claim_data_dir(data_dir: Path) -> None:
    """Make sure `data_dir` is lilo's before lilo writes there (nothing is written here): a
    new or empty folder, one holding the warehouse, or one holding only what lilo makes. Any
    other folder (a mistyped `--data-dir ~`) is refused with `NotLilosFolder`."""
    key = os.path.abspath(data_dir)
    if key in _CLAIMED:
        return
    if data_dir.is_dir():
        names = {entry.name for entry in os.scandir(data_dir)}
        others = sorted(names - _OWN_NAMES)
        if others and WAREHOUSE not in names:
            shown = ", ".join(others[:3]) + (f" and {len(others) - 3} more" if others[3:] else "")
            raise NotLilosFolder(
                f"{data_dir} holds files lilo did not make ({shown}): give --data-dir "
                "(LILO_DATA_DIR) a new or empty folder, or the one that holds lilo.duckdb"
            )
    _CLAIMED.add(key)


def _open_folder(data_dir: Path, relative: Path) -> int:
    """A descriptor of `data_dir / relative`, each folder on the way made if missing and
    opened without following a link: a link (or a file) there is `NotLilosFolder`."""
    data_dir.mkdir(parents=True, exist_ok=True)
    fd = os.open(data_dir, os.O_RDONLY | os.O_DIRECTORY)
    for n, part in enumerate(relative.parts):
        try:
            with contextlib.suppress(FileExistsError):
                os.mkdir(part, dir_fd=fd)
            inner = os.open(part, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW, dir_fd=fd)
        except OSError as exc:
            if exc.errno not in (errno.ELOOP, errno.ENOTDIR):
                raise
            where = data_dir.joinpath(*relative.parts[: n + 1])
            raise NotLilosFolder(
                f"{where} is a link or a file, not a folder: lilo writes only inside its data "
                "dir; remove it (lilo makes the folder again)"
            ) from exc
        finally:
            os.close(fd)
        fd = inner
    return fd


def place(tmp: Path, target: Path, data_dir: Path) -> None:
    """Move the finished temporary `tmp` to `target` under `data_dir` in one step (a reader
    sees the old file or the new one). The folders on the way are made where missing and
    must be folders, not links; a link at `target` itself is replaced, never followed."""
    folder = _open_folder(data_dir, target.parent.relative_to(data_dir))
    try:
        os.replace(tmp, target.name, dst_dir_fd=folder)
    finally:
        os.close(folder)


def write_atomic(path: Path, data: bytes | str, data_dir: Path) -> None:
    """Write `path` (under `data_dir`) through a temporary: a crash never leaves a partial
    file under its final name, and a link on the way is never written through (`place`)."""
    tmp = temp_path(data_dir, path.name)
    try:
        with open(tmp, "xb") as handle:
            handle.write(data.encode("utf-8") if isinstance(data, str) else data)
        place(tmp, path, data_dir)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


# -- temporaries -----------------------------------------------------------------------
def _read_text(path: str) -> str:
    try:
        with open(path, encoding="ascii") as handle:
            return handle.read().strip()
    except OSError:
        return ""


@functools.cache
def _machine() -> str:
    """This host, boot and pid namespace: a pid means the same process only within them."""
    try:
        namespace = os.readlink("/proc/self/ns/pid")
    except OSError:
        namespace = ""
    boot = _read_text("/proc/sys/kernel/random/boot_id")
    return hashlib.sha256(f"{socket.gethostname()}\0{boot}\0{namespace}".encode()).hexdigest()[:12]


def _started(pid: int) -> int:
    """The process's start time (clock ticks after boot, /proc/PID/stat); 0 where unknown."""
    fields = _read_text(f"/proc/{pid}/stat").rpartition(")")[2].split()
    return int(fields[19]) if len(fields) > 19 else 0


def _owner() -> str:
    pid = os.getpid()
    return f"lilo-{_machine()}-{pid}-{_started(pid)}"


def pid_alive(pid: int) -> bool:
    """Whether a process with this id runs on this machine (in this pid namespace)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _owner_gone(machine: str, pid: int, started: int) -> bool:
    """Only what can be seen from here is proof: another machine's, boot's or namespace's
    process may still run."""
    if machine != _machine():
        return False
    if not pid_alive(pid):
        return True
    now = _started(pid)
    return bool(started and now and now != started)  # the pid was taken by a later process


def _temp_root(data_dir: Path) -> Path:
    claim_data_dir(data_dir)
    os.close(_open_folder(data_dir, Path(TMP)))
    return data_dir / TMP


def temp_path(data_dir: Path, what: str) -> Path:
    """A new path (nothing there yet) for a temporary in lilo's folder `data_dir/tmp`,
    named with this process as its owner; the caller creates and removes it."""
    name = f".{what}.{secrets.token_hex(4)}.{_owner()}.tmp"
    return _temp_root(data_dir) / name


@contextmanager
def temp_dir(data_dir: Path, purpose: str) -> Iterator[str]:
    """A temporary folder in `data_dir/tmp` (unpacked e-prints: hostile sources stay inside
    the data dir), removed when the block ends, or by the next run's sweep when this process
    is killed. The folders made for it go too, if nothing else is in them (`lilo clean PATH`
    leaves no data dir behind)."""
    made = folders_to_make(data_dir)
    root = _temp_root(data_dir)
    try:
        with tempfile.TemporaryDirectory(
            prefix=f".{purpose}-", suffix=f".{_owner()}.tmp", dir=root
        ) as tmp:
            yield tmp
    finally:
        remove_if_empty(made)


def folders_to_make(data_dir: Path) -> list[Path]:
    """The folders a first temporary in `data_dir/tmp` creates (none when they exist), for
    `remove_if_empty` once the temporary is gone."""
    return [path for path in (data_dir, data_dir / TMP) if not path.exists()]


def remove_if_empty(made: list[Path]) -> None:
    """Remove the folders this process made (`folders_to_make`), deepest first, each only
    while nothing is in it: a command that ends before writing leaves no data dir behind."""
    for path in reversed(made):
        with contextlib.suppress(OSError):  # not empty: lilo wrote there, or another process
            path.rmdir()


def remove_stale_temp(data_dir: Path) -> list[Path]:
    """Remove, from `data_dir/tmp` only, the temporaries whose owner is provably gone
    (files, folders with what they hold, a copy's `.wal`); anything else there, a live or
    unknown owner's, is kept. Returns what was removed."""
    claim_data_dir(data_dir)
    folder = _open_folder(data_dir, Path(TMP))
    removed = []
    try:
        for entry in os.scandir(folder):
            found = _OWNED.match(entry.name)
            if found is None:
                continue
            machine, pid, started = found.group(1), int(found.group(2)), int(found.group(3))
            if not _owner_gone(machine, pid, started):
                continue
            if entry.is_dir(follow_symlinks=False):
                shutil.rmtree(entry.name, ignore_errors=True, dir_fd=folder)
            else:
                with contextlib.suppress(FileNotFoundError):
                    os.unlink(entry.name, dir_fd=folder)
            removed.append(data_dir / TMP / entry.name)
    finally:
        os.close(folder)
    return removed
