"""A survey that breaks the reader in an unforeseen way is quarantined, not a failed stage."""

from __future__ import annotations

import io
import tarfile
from pathlib import Path

from tasks.config import Settings
from tasks.records import RawSource
from tasks.samples.survey import read_survey

BODY = "\\section{Intro}\n" + "Related work is surveyed here. " * 60


def test_unreadable_survey_becomes_a_quarantine_record(tmp_path: Path) -> None:
    """A title nested 5,000 braces deep makes the LaTeX reader recurse too far."""
    title = "{" * 5000 + "Deep" + "}" * 5000
    main = (
        f"\\documentclass{{article}}\\title{{{title}}}\\begin{{document}}\\maketitle\n"
        f"{BODY}\\bibliography{{refs}}\\end{{document}}\n"
    )
    archive = tmp_path / "survey.tar.gz"
    with tarfile.open(archive, "w:gz") as tar:
        for name, text in {"main.tex": main, "refs.bib": "@article{a, title={T}}"}.items():
            info = tarfile.TarInfo(name)
            info.size = len(text.encode())
            tar.addfile(info, io.BytesIO(text.encode()))
    raw = RawSource("2601.99999", "s", str(archive), archive.stat().st_size, "tar.gz")
    record = read_survey(raw, Settings().with_overrides({"data_dir": str(tmp_path)}))
    assert (record.item_id, record.stage, record.reason) == (
        "2601.99999",
        "fetch",
        "survey_unreadable",
    )
    assert record.detail.startswith("RecursionError: ")
