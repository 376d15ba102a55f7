"""A survey that breaks the reader in an unforeseen way is quarantined, not a failed stage."""

from __future__ import annotations

import io
import tarfile
from pathlib import Path

from lilo.tasks.config import Settings
from lilo.tasks.records import RawSource
from lilo.tasks.samples.survey import read_survey

BODY = "\\section{Intro}\n" + "Related work is surveyed here. " * 60


def _survey(tmp_path: Path, title: str) -> RawSource:
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
    return RawSource("2601.99999", "s", str(archive), archive.stat().st_size, "tar.gz")


def test_unreadable_survey_becomes_a_quarantine_record(tmp_path: Path) -> None:
    """An archive gone between fetch and read: a failure no check foresees."""
    raw = _survey(tmp_path, "Fine")
    Path(raw.path).unlink()
    record = read_survey(raw, Settings().with_overrides({"data_dir": str(tmp_path / "data")}))
    assert (record.item_id, record.stage, record.reason) == (
        "2601.99999",
        "fetch",
        "survey_unreadable",
    )
    assert record.detail.startswith("FileNotFoundError: ")


def test_a_title_nested_too_deep_for_the_parser_loses_its_markup_not_the_survey(
    tmp_path: Path,
) -> None:
    """5,000 nested braces make the LaTeX parser recurse too far: the title is read without
    its markup instead."""
    raw = _survey(tmp_path, "{" * 5000 + "Deep" + "}" * 5000)
    survey = read_survey(raw, Settings().with_overrides({"data_dir": str(tmp_path / "data")}))
    assert survey.title == "Deep"
