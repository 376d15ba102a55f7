"""Unpack an untrusted arXiv e-print into the paper's own folder (docs/design.md §3).

An e-print is a gzipped tar, a plain tar, a single (gzipped) `.tex`, or a PDF when the
authors gave no source. Everything is streamed through a byte counter so that a gzip bomb
stops after the first chunk past a cap instead of inflating in memory, and every tar member
is checked before a byte of it is written: no links, devices, absolute paths or `..`.
"""

from __future__ import annotations

import gzip
import io
import shutil
import tarfile
import zlib
from pathlib import Path, PurePosixPath, PureWindowsPath

from lilo.tasks.clean.errors import Quarantined
from lilo.tasks.config import CleanSettings

__all__ = ["extract_archive"]

_GZIP_MAGIC = b"\x1f\x8b"
_PDF_MAGIC = b"%PDF"
_TAR_BLOCK = 512
_CHUNK = 64 * 1024


class _CappedStream(io.RawIOBase):
    """Counts unpacked bytes as they are read and refuses past the byte and ratio caps."""

    def __init__(
        self, source: io.BufferedIOBase, limits: CleanSettings, packed_bytes: int | None
    ) -> None:
        self._source = source
        self._limits = limits
        self._packed_bytes = packed_bytes
        self.total = 0

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: memoryview) -> int:  # type: ignore[override]  # given a memoryview
        data = self._source.read(len(buffer))
        buffer[: len(data)] = data
        self.total += len(data)
        self._check()
        return len(data)

    def _check(self) -> None:
        limits = self._limits
        if self.total > limits.max_archive_bytes:
            raise Quarantined(
                "unsafe_archive", f"archive: unpacks to more than {limits.max_archive_bytes} bytes"
            )
        if (
            self._packed_bytes is not None
            and self.total > limits.ratio_floor_bytes
            and self.total > self._packed_bytes * limits.max_compression_ratio
        ):
            raise Quarantined(
                "unsafe_archive",
                f"archive: compression ratio above {limits.max_compression_ratio:g} "
                f"({self._packed_bytes} bytes unpack to more than {self.total}): a gzip bomb?",
            )


def extract_archive(archive: Path, dest: Path, limits: CleanSettings) -> str:
    """Unpack `archive` into `dest` and return its format: tar.gz | tar | tex.gz | tex.

    A single `.tex` is written as `main.tex`. Raises `Quarantined` with `no_latex_source`
    (PDF), `unsafe_archive` (a hostile member or a cap), `corrupt_archive` or `unknown_format`.
    """
    dest.mkdir(parents=True, exist_ok=True)
    root = dest.resolve()
    with archive.open("rb") as raw:
        magic = raw.read(len(_PDF_MAGIC))
        raw.seek(0)
        if magic.startswith(_PDF_MAGIC):
            raise Quarantined("no_latex_source", f"{archive.name} is a PDF: arXiv has no source")
        packed = magic.startswith(_GZIP_MAGIC)
        source: io.BufferedIOBase = gzip.GzipFile(fileobj=raw) if packed else raw
        capped = _CappedStream(source, limits, archive.stat().st_size if packed else None)
        stream = io.BufferedReader(capped, buffer_size=_CHUNK)
        try:
            head = stream.peek(_TAR_BLOCK)[:_TAR_BLOCK]
            if _is_tar_header(head):
                _extract_tar(stream, root, limits)
                return "tar.gz" if packed else "tar"
            _write_single(stream, head, root, archive.name)
            return "tex.gz" if packed else "tex"
        except (tarfile.TarError, EOFError, zlib.error, gzip.BadGzipFile) as exc:
            raise Quarantined("corrupt_archive", f"{archive.name}: {exc}") from exc


def _is_tar_header(head: bytes) -> bool:
    if len(head) < _TAR_BLOCK:
        return False
    try:
        tarfile.TarInfo.frombuf(head, "utf-8", "surrogateescape")
    except tarfile.HeaderError:
        return False
    return True


def _write_single(
    stream: io.BufferedReader[_CappedStream], head: bytes, root: Path, name: str
) -> None:
    if head.startswith(_PDF_MAGIC):
        raise Quarantined("no_latex_source", f"{name} unpacks to a PDF: arXiv has no source")
    if b"\x00" in head:
        raise Quarantined("unknown_format", f"{name}: binary data, neither a tar nor a .tex")
    with (root / "main.tex").open("wb") as out:
        shutil.copyfileobj(stream, out, _CHUNK)


def _extract_tar(
    stream: io.BufferedReader[_CappedStream], root: Path, limits: CleanSettings
) -> None:
    """Stream mode (`r|`): each member is checked, then copied, before the next is read."""
    members = 0
    declared = 0
    with tarfile.open(fileobj=stream, mode="r|") as tar:
        for member in tar:
            members += 1
            if members > limits.max_files:
                raise Quarantined("unsafe_archive", f"archive: more than {limits.max_files} files")
            declared += max(member.size, 0)
            if declared > limits.max_archive_bytes:
                raise Quarantined(
                    "unsafe_archive",
                    f"{member.name}: archive passes {limits.max_archive_bytes} bytes",
                )
            target = _safe_target(member, root)
            if member.isdir():
                target.mkdir(parents=True, exist_ok=True)
                continue
            target.parent.mkdir(parents=True, exist_ok=True)
            content = tar.extractfile(member)
            if content is None:
                raise Quarantined("unsafe_archive", f"{member.name}: no readable content")
            with target.open("wb") as out:
                shutil.copyfileobj(content, out, _CHUNK)


def _safe_target(member: tarfile.TarInfo, root: Path) -> Path:
    """Where `member` may be written, or `Quarantined` when it is hostile."""
    why = _unsafe_reason(member)
    if why is None:
        target = (root / member.name).resolve()
        if target.is_relative_to(root):
            return target
        why = "resolves outside the destination"
    raise Quarantined("unsafe_archive", f"{member.name}: {why}")


def _unsafe_reason(member: tarfile.TarInfo) -> str | None:
    name = member.name
    if name.startswith(("/", "\\")) or PureWindowsPath(name).drive:
        return "absolute path"
    if ".." in PurePosixPath(name.replace("\\", "/")).parts:
        return "parent-directory (..) component"
    if member.issym() or member.islnk():
        return f"link to {member.linkname!r} (links are never followed)"
    if member.ischr() or member.isblk() or member.isfifo():
        return "device or fifo"
    if not (member.isreg() or member.isdir()):
        return f"unsupported member type {member.type!r}"
    return None
