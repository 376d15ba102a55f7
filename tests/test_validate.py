"""The papers suite: good papers pass, bad ones are quarantined under the expectation's name.

GX is imported once per process (about 3 s); each validation after that is fast.
"""

from __future__ import annotations

import hashlib
import json
import time
from dataclasses import replace
from pathlib import Path

import pytest
from conftest import PAPERS

from lilo.expectations import SUITES_DIR
from lilo.tasks.clean import clean_folder
from lilo.tasks.config import Settings
from lilo.tasks.records import PaperText, RawSource
from lilo.tasks.text import count_words
from lilo.tasks.tokens import count_word_tokens
from lilo.tasks.validate import SUITE_FILE, markup_density, validate_papers

SETTINGS = Settings()
NOT_MATCH = "expect_column_values_to_not_match_regex:text"


def _paper(paper_id: str, text: str | None = None, title: str = "A fine title") -> PaperText:
    if text is None:
        sentence = f"Paper {paper_id} studies kernels and \\emph{{priors}} \\cite{{x}}. "
        text = f"\\section{{Intro}}\n{sentence * 400}\n$a^2$\n"
    return PaperText(
        paper_id=paper_id,
        title=title,
        text=text,
        words=count_words(text),
        tokens=count_word_tokens(text),
        main_file="ms.tex",
        cleaner_version="test",
        source_sha256="s",
        content_sha256=hashlib.sha256(text.encode()).hexdigest(),
    )


@pytest.fixture(scope="module")
def good() -> list[PaperText]:
    return [_paper(f"2401.{i:05d}") for i in range(15)]


def test_suite_is_json_in_expectations() -> None:
    assert SUITE_FILE.parent == SUITES_DIR
    suite = json.loads(SUITE_FILE.read_text())
    types = {e["type"] for e in suite["expectations"]}
    assert {"expect_column_values_to_be_unique", "expect_column_values_to_not_be_null"} <= types


def test_good_papers_pass_quickly_and_quietly(good: list[PaperText], capfd) -> None:
    start = time.perf_counter()
    result = validate_papers(good, SETTINGS.clean)
    assert time.perf_counter() - start < 10
    assert result.passed == [p.paper_id for p in good] and result.quarantine == []
    assert result.summary["success"] is True and result.summary["papers"] == 15
    json.dumps(result.summary)
    out, err = capfd.readouterr()
    assert "Calculating Metrics" not in out + err and "%|" not in out + err


@pytest.mark.parametrize(
    ("bad", "reason"),
    [
        (lambda p: replace(p, text="\\appendix\n" + p.text), NOT_MATCH),
        (lambda p: replace(p, text="\\documentclass{article}\n" + p.text), NOT_MATCH),
        (lambda p: replace(p, text=p.text + "\n\\bibliography{refs}\n"), NOT_MATCH),
        (lambda p: replace(p, text=p.text + "\n  % a leftover comment\n"), NOT_MATCH),
        (lambda p: replace(p, words=120), "expect_column_values_to_be_between:words"),
        (lambda p: replace(p, title=""), "expect_column_value_lengths_to_be_between:title"),
        (
            lambda p: replace(p, text=p.text + "\\frac{\\alpha}{\\beta}" * 5000),
            "expect_column_values_to_be_between:markup_density",
        ),
    ],
    ids=["appendix", "documentclass", "bibliography", "comment", "short", "title", "markup"],
)
def test_bad_paper_is_quarantined(good: list[PaperText], bad, reason: str) -> None:
    papers = [*good[:3], bad(_paper("bad"))]
    result = validate_papers(papers, SETTINGS.clean)
    assert result.passed == [p.paper_id for p in good[:3]]
    [record] = result.quarantine
    assert (record.item_id, record.stage, record.reason) == ("bad", "validate", reason)
    assert result.summary["success"] is False and result.summary["quarantined"] == 1


def test_duplicates_keep_the_first_copy(good: list[PaperText]) -> None:
    copy = replace(good[0], paper_id="copy")
    result = validate_papers([good[0], good[1], copy], SETTINGS.clean)
    assert result.passed == [good[0].paper_id, good[1].paper_id]
    assert [q.item_id for q in result.quarantine] == ["copy"]
    assert result.quarantine[0].reason == "expect_column_values_to_be_unique:content_sha256"


def test_min_words_comes_from_settings(good: list[PaperText]) -> None:
    short = replace(_paper("short"), words=120)
    lenient = SETTINGS.with_overrides({"clean.min_words": 100})
    assert validate_papers([short], lenient.clean).passed == ["short"]


def test_words_are_capped_with_a_clear_reason() -> None:
    """A paper past `clean.max_words` (a macro or input bomb) is quarantined, saying why."""
    huge = replace(_paper("huge"), words=300_000)
    result = validate_papers([huge, _paper("fine")], SETTINGS.clean)
    assert result.passed == ["fine"]
    (quarantined,) = result.quarantine
    assert quarantined.reason == "expect_column_values_to_be_between:words"
    assert "max_value=200000" in quarantined.detail


def test_no_papers() -> None:
    result = validate_papers([], SETTINGS.clean)
    assert result.passed == [] and result.quarantine == [] and result.summary["success"]


def test_markup_density() -> None:
    assert markup_density("") == 0.0
    assert markup_density("plain words only") == 0.0
    assert markup_density("\\emph{x}") == pytest.approx(7 / 8)


def test_appendix_environment_is_caught(good: list[PaperText]) -> None:
    bad = replace(_paper("bad"), text=_paper("bad").text + "\\begin{appendix}\n")
    [record] = validate_papers([good[0], bad], SETTINGS.clean).quarantine
    assert record.item_id == "bad" and record.reason == NOT_MATCH


def test_corpus_papers_pass_and_data_docs_are_built(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    papers = []
    for folder in sorted(PAPERS.iterdir()):
        raw = RawSource(folder.name, "", str(folder), 0, "folder")
        papers.append(clean_folder(folder, raw, SETTINGS.clean))
    assert all(isinstance(p, PaperText) for p in papers)
    monkeypatch.chdir(tmp_path)
    result = validate_papers(papers, SETTINGS.clean, Path("docs"))  # relative, like lilo-data/
    assert result.quarantine == [] and len(result.passed) == 15
    assert (tmp_path / result.summary["data_docs"]).is_file()
    [page] = (tmp_path / "docs" / "validations").rglob("*.html")
    assert "values must be unique" in page.read_text()  # the rendered uniqueness check


def test_copy_of_a_paper_kept_on_an_earlier_run(good: list[PaperText]) -> None:
    copy = replace(good[0], paper_id="copy")
    earlier = {p.content_sha256: p.paper_id for p in good[:3]}
    result = validate_papers([good[1], copy, good[2]], SETTINGS.clean, earlier=earlier)
    assert result.passed == [good[1].paper_id, good[2].paper_id]  # re-cleaned: not copies
    [record] = result.quarantine
    assert (record.item_id, record.reason) == (
        "copy",
        "expect_column_values_to_be_unique:content_sha256",
    )
    assert f"same as {good[0].paper_id}" in record.detail
    assert result.summary["success"] is False and result.summary["quarantined"] == 1
