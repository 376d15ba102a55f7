"""clean_paper: an e-print in, a PaperText or a Quarantine out, never an exception."""

from __future__ import annotations

import gzip
import hashlib
import io
import tarfile
from pathlib import Path

import pytest
from conftest import PAPERS

from lilo.tasks.clean import CLEANER_VERSION, clean_paper
from lilo.tasks.config import Settings
from lilo.tasks.records import PaperText, Quarantine, RawSource
from lilo.tasks.text import count_words

SETTINGS = Settings().with_overrides({"clean.min_words": 50})

BODY = " ".join(f"Sentence number {i} explains kernels." for i in range(40))
PAPER = (
    "\\documentclass{article}\n\\title{Kernel Things}\n\\begin{document}\n"
    f"\\section{{Intro}}\n{BODY}\n\\end{{document}}\n"
)


def _raw(path: Path, arxiv_id: str = "2401.00001", title: str = "Metadata title") -> RawSource:
    return RawSource(
        arxiv_id=arxiv_id,
        sha256="feed",
        path=str(path),
        size_bytes=path.stat().st_size if path.exists() else 0,
        format="tar.gz",
        title=title,
        categories="cs.LG",
    )


def _targz(path: Path, files: dict[str, bytes]) -> Path:
    with tarfile.open(path, "w:gz") as tar:
        for name, data in files.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return path


def test_clean_paper_returns_paper_text(tmp_path: Path) -> None:
    archive = _targz(tmp_path / "a.tar.gz", {"ms.tex": PAPER.encode()})
    paper = clean_paper(_raw(archive, "astro-ph/9911436"), tmp_path / "work", SETTINGS.clean)
    assert isinstance(paper, PaperText)
    assert paper.paper_id == "astro-ph/9911436"
    assert (tmp_path / "work" / "astro-ph_9911436" / "ms.tex").exists()
    assert paper.title == "Kernel Things" and paper.main_file == "ms.tex"
    assert paper.words == count_words(paper.text) >= 50 and paper.tokens > paper.words
    assert paper.content_sha256 == hashlib.sha256(paper.text.encode()).hexdigest()
    assert paper.cleaner_version == CLEANER_VERSION
    assert paper.source_sha256 == "feed" and paper.categories == "cs.LG"
    assert paper.removed["preamble"] > 0


def test_title_falls_back_to_metadata(tmp_path: Path) -> None:
    archive = tmp_path / "one.gz"
    archive.write_bytes(gzip.compress(PAPER.replace("\\title{Kernel Things}", "").encode()))
    paper = clean_paper(_raw(archive), tmp_path / "work", SETTINGS.clean)
    assert isinstance(paper, PaperText) and paper.title == "Metadata title"


def test_rerun_replaces_the_folder(tmp_path: Path) -> None:
    archive = _targz(tmp_path / "a.tar.gz", {"ms.tex": PAPER.encode()})
    stale = tmp_path / "work" / "2401.00001" / "stale.tex"
    stale.parent.mkdir(parents=True)
    stale.write_text(PAPER.replace("Kernel Things", "Stale").replace("kernels", "stale"))
    paper = clean_paper(_raw(archive), tmp_path / "work", SETTINGS.clean)
    assert isinstance(paper, PaperText) and not stale.exists()


@pytest.mark.parametrize(
    ("files", "reason"),
    [
        ({"ms.tex": b"\\documentclass{article}\\begin{document}Too short.\\end{document}"}, None),
        ({"notes.tex": PAPER.replace("\\documentclass{article}", "").encode()}, "no_main_file"),
        ({"../evil.tex": b"x"}, "unsafe_archive"),
    ],
    ids=["too-short", "no-main", "dotdot"],
)
def test_bad_papers_are_quarantined(tmp_path: Path, files: dict, reason: str | None) -> None:
    archive = _targz(tmp_path / "a.tar.gz", files)
    result = clean_paper(_raw(archive), tmp_path / "work", SETTINGS.clean)
    assert isinstance(result, Quarantine) and result.stage == "clean"
    assert result.item_id == "2401.00001"
    if reason is None:
        assert result.reason == "too_short" and result.detail.endswith("words < 50")
    else:
        assert result.reason == reason


def test_pdf_and_unexpected_errors_are_quarantined(tmp_path: Path) -> None:
    pdf = tmp_path / "p.pdf"
    pdf.write_bytes(b"%PDF-1.4\n")
    assert clean_paper(_raw(pdf), tmp_path / "work", SETTINGS.clean).reason == "no_latex_source"
    missing = clean_paper(_raw(tmp_path / "nowhere"), tmp_path / "work", SETTINGS.clean)
    assert isinstance(missing, Quarantine) and missing.reason == "clean_error"
    assert "FileNotFoundError" in missing.detail


def test_real_paper_end_to_end(tmp_path: Path) -> None:
    archive = tmp_path / "1703.09710.tar.gz"
    with tarfile.open(archive, "w:gz") as tar:
        tar.add(PAPERS / "celerite-scalable-gp", arcname=".")
    paper = clean_paper(_raw(archive, "1703.09710"), tmp_path / "work", Settings().clean)
    assert isinstance(paper, PaperText)
    assert paper.words > Settings().clean.min_words
    assert "missing input: vc.tex" in paper.warnings
