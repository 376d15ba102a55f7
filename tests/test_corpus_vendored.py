"""The real papers the tests read are vendored in tests/corpus/, so a fresh clone runs every
test: no folder may be missing, no item without its license, no test pointing outside the
repository, and git must keep the files byte for byte (CRLF endings are test traps)."""

from __future__ import annotations

import csv
import re
from pathlib import Path

import pytest
from conftest import CORPUS, PAPERS, SURVEY

TESTS = Path(__file__).resolve().parent
FOLDERS = {"paper": "papers", "survey": "surveys"}


def _manifest() -> list[dict[str, str]]:
    with (CORPUS / "MANIFEST.tsv").open(newline="", encoding="utf-8") as handle:
        return list(csv.DictReader(handle, delimiter="\t"))


def test_the_corpus_is_in_the_repository() -> None:
    assert CORPUS.is_relative_to(TESTS)
    assert PAPERS.is_dir() and SURVEY.is_dir()
    assert (CORPUS / "README.md").is_file()


@pytest.mark.parametrize("row", _manifest(), ids=lambda row: row["slug"])
def test_every_manifest_item_has_its_folder_and_license(row: dict[str, str]) -> None:
    folder = CORPUS / FOLDERS[row["kind"]] / row["slug"]
    assert any(p.suffix == ".tex" for p in folder.rglob("*")), f"{folder} holds no .tex"
    license_text = (folder / "LICENSE").read_text(encoding="utf-8")
    assert row["license"].startswith("MIT")
    assert "MIT License" in license_text and "Permission is hereby granted" in license_text


def test_every_vendored_folder_is_in_the_manifest() -> None:
    listed = {(FOLDERS[row["kind"]], row["slug"]) for row in _manifest()}
    on_disk = {(kind, p.name) for kind in FOLDERS.values() for p in (CORPUS / kind).iterdir()}
    assert on_disk == listed


def test_line_endings_survive_git() -> None:
    """`tests/corpus/.gitattributes` turns off end-of-line conversion; without it a checkout
    with core.autocrlf would rewrite these files and the cleaner's CRLF cases would test
    nothing."""
    assert b"\r\n" in (PAPERS / "deep-gp-pathologies" / "deep-limits.tex").read_bytes()
    assert b"\r\n" in (PAPERS / "herding-bayesian-quadrature" / "herding-bmc.bbl").read_bytes()
    assert b"\r\n" not in (PAPERS / "celerite-scalable-gp" / "ms.tex").read_bytes()


def test_no_test_reads_papers_from_outside_the_repository() -> None:
    """The papers once lived in a sibling `shared/` folder, and 43 tests skipped without it."""
    outside = re.compile(r"""parents\[[2-9]\]|["']/work/|["']shared["']""")
    offenders = [
        f"{path.name}:{number}"
        for path in sorted(TESTS.glob("*.py"))
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if outside.search(line) and path != Path(__file__).resolve()
    ]
    assert offenders == []
