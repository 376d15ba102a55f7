"""Hostile and ordinary e-prints: every refusal names its reason and writes nothing outside
the destination (checked on disk)."""

from __future__ import annotations

import gzip
import io
import tarfile
from pathlib import Path

import pytest

from lilo.tasks.clean.errors import Quarantined
from lilo.tasks.clean.extract import extract_archive
from lilo.tasks.config import Settings

SETTINGS = Settings()


def _member(name: str, data: bytes = b"", kind: bytes = tarfile.REGTYPE, link: str = ""):
    info = tarfile.TarInfo(name)
    info.type = kind
    info.linkname = link
    info.size = len(data) if kind == tarfile.REGTYPE else 0
    return info, (io.BytesIO(data) if kind == tarfile.REGTYPE else None)


def _tar(path: Path, members: list, compress: bool = True) -> Path:
    with tarfile.open(path, "w:gz" if compress else "w") as tar:
        for info, data in members:
            tar.addfile(info, data)
    return path


def _snapshot(root: Path, dest: Path) -> set[Path]:
    """Everything under `root` that is not inside `dest`."""
    return {p for p in root.rglob("*") if p != dest and dest not in p.parents}


def _refused(tmp_path: Path, archive: Path, settings: Settings = SETTINGS) -> Quarantined:
    dest = tmp_path / "out" / "paper"
    dest.parent.mkdir(exist_ok=True)
    before = _snapshot(tmp_path, dest)
    with pytest.raises(Quarantined) as caught:
        extract_archive(archive, dest, settings.clean)
    assert _snapshot(tmp_path, dest) == before, "something was written outside the destination"
    assert not [p for p in tmp_path.rglob("*") if p.is_symlink()]
    return caught.value


def test_tar_gz_is_unpacked_with_folders(tmp_path: Path) -> None:
    archive = _tar(
        tmp_path / "a.tar.gz",
        [
            _member("sections", kind=tarfile.DIRTYPE),
            _member("main.tex", b"\\documentclass{article}"),
            _member("sections/intro.tex", b"Intro"),
            _member("./figures/table.tex", b"Table"),
        ],
    )
    dest = tmp_path / "out"
    assert extract_archive(archive, dest, SETTINGS.clean) == "tar.gz"
    assert (dest / "sections" / "intro.tex").read_text() == "Intro"
    assert (dest / "figures" / "table.tex").read_text() == "Table"


def test_plain_tar(tmp_path: Path) -> None:
    archive = _tar(tmp_path / "a.tar", [_member("ms.tex", b"x")], compress=False)
    assert extract_archive(archive, tmp_path / "out", SETTINGS.clean) == "tar"
    assert (tmp_path / "out" / "ms.tex").read_text() == "x"


def test_single_gzipped_tex_becomes_main_tex(tmp_path: Path) -> None:
    archive = tmp_path / "2401.00001"
    archive.write_bytes(gzip.compress(b"\\documentclass{article}\n"))
    assert extract_archive(archive, tmp_path / "out", SETTINGS.clean) == "tex.gz"
    assert (tmp_path / "out" / "main.tex").read_text() == "\\documentclass{article}\n"


def test_plain_tex(tmp_path: Path) -> None:
    archive = tmp_path / "paper"
    archive.write_bytes(b"\\documentclass{article}\n")
    assert extract_archive(archive, tmp_path / "out", SETTINGS.clean) == "tex"
    assert (tmp_path / "out" / "main.tex").exists()


def test_pdf_has_no_latex_source(tmp_path: Path) -> None:
    archive = tmp_path / "paper.pdf"
    archive.write_bytes(b"%PDF-1.5\n%binary")
    assert _refused(tmp_path, archive).reason == "no_latex_source"


def test_gzipped_pdf_has_no_latex_source(tmp_path: Path) -> None:
    archive = tmp_path / "paper.gz"
    archive.write_bytes(gzip.compress(b"%PDF-1.5\n" + b"x" * 1000))
    assert _refused(tmp_path, archive).reason == "no_latex_source"


@pytest.mark.parametrize(
    ("member", "why"),
    [
        (lambda root: _member(str(root / "abs_evil.tex"), b"evil"), "absolute path"),
        (lambda root: _member("../evil.tex", b"evil"), ".."),
        (lambda root: _member("sub/../../evil.tex", b"evil"), ".."),
        (lambda root: _member("link", kind=tarfile.SYMTYPE, link=str(root)), "link"),
        (lambda root: _member("hard", kind=tarfile.LNKTYPE, link="../../a.tar.gz"), "link"),
        (lambda root: _member("dev", kind=tarfile.CHRTYPE), "device"),
        (lambda root: _member("blk", kind=tarfile.BLKTYPE), "device"),
        (lambda root: _member("pipe", kind=tarfile.FIFOTYPE), "fifo"),
    ],
    ids=["absolute", "dotdot", "nested-dotdot", "symlink", "hardlink", "chr", "blk", "fifo"],
)
def test_hostile_member_is_refused(tmp_path: Path, member, why: str) -> None:
    members = [_member("main.tex", b"ok"), member(tmp_path), _member("link/evil.tex", b"evil")]
    error = _refused(tmp_path, _tar(tmp_path / "a.tar.gz", members))
    assert error.reason == "unsafe_archive"
    assert why in error.detail
    assert not (tmp_path / "evil.tex").exists() and not (tmp_path / "abs_evil.tex").exists()


def test_too_many_files(tmp_path: Path) -> None:
    settings = SETTINGS.with_overrides({"clean.max_files": 3})
    archive = _tar(tmp_path / "a.tar.gz", [_member(f"f{i}.tex", b"x") for i in range(5)])
    error = _refused(tmp_path, archive, settings)
    assert error.reason == "unsafe_archive" and "more than 3 files" in error.detail


@pytest.mark.parametrize("compress", [True, False])
def test_too_many_bytes(tmp_path: Path, compress: bool) -> None:
    settings = SETTINGS.with_overrides({"clean.max_archive_bytes": 50_000})
    archive = _tar(tmp_path / "a.tar", [_member("big.tex", b"y" * 80_000)], compress=compress)
    error = _refused(tmp_path, archive, settings)
    assert error.reason == "unsafe_archive" and "50000 bytes" in error.detail


def test_gzip_bomb_stops_on_ratio(tmp_path: Path) -> None:
    archive = _tar(tmp_path / "bomb.tar.gz", [_member("bomb.tex", b"\0" * 8_000_000)])
    assert archive.stat().st_size < 40_000
    error = _refused(tmp_path, archive)
    assert error.reason == "unsafe_archive" and "compression ratio" in error.detail
    written = sum(p.stat().st_size for p in (tmp_path / "out").rglob("*") if p.is_file())
    assert written < 3 * SETTINGS.clean.ratio_floor_bytes


def test_corrupt_gzip(tmp_path: Path) -> None:
    archive = tmp_path / "bad.gz"
    archive.write_bytes(gzip.compress(b"\\documentclass" * 100)[:40])
    assert _refused(tmp_path, archive).reason == "corrupt_archive"
