"""`lilo refs`: the real survey offline, archives, biblatex and two-main-file surveys, and the
title search against the loopback arXiv mirror (real HTTP through the `arxiv` client)."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest
from conftest import SURVEY

from lilo.flows.cli import main
from lilo.tasks.synthetic import Manifest, Mirror, write_corpus


def _refs(capsys: pytest.CaptureFixture[str], *argv: str) -> list[dict[str, str | None]]:
    assert main(["refs", *argv]) == 0
    return [json.loads(line) for line in capsys.readouterr().out.splitlines()]


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Manifest]:
    root = tmp_path_factory.mktemp("corpus")
    return root, write_corpus(root)


def test_corpus_survey_offline(capsys: pytest.CaptureFixture[str]) -> None:
    """190 entries in bib.bib. 136 carry an arXiv id: 134 ADS `eprint`s (old-style ids such as
    astro-ph/9911436 among them), one arXiv DOI and one `journal = {arXiv:2003.01115}`; the
    corpus README's 135 misses one of those two. One key appears twice (BibTeX ignores the
    second); the other 53 name no id (books, journals without preprints)."""
    assert main(["refs", str(SURVEY), "--offline"]) == 0
    out, err = capsys.readouterr()
    rows = [json.loads(line) for line in out.splitlines()]
    assert "136/190 entries resolved" in err
    assert len(rows) == 190
    assert sum(1 for r in rows if r["arxiv_id"]) == 136
    assert Counter(r["how"] for r in rows) == {
        "eprint": 134,
        "unresolved": 53,
        "doi": 1,
        "journal": 1,
        "duplicate": 1,
    }
    ids = {r["arxiv_id"] for r in rows}
    assert {"astro-ph/9911436", "comp-gas/9405004", "1703.09710", "2102.00007"} <= ids
    assert list(rows[0]) == [
        "key",
        "title",
        "arxiv_id",
        "how",
        "authors",
        "year",
        "venue",
        "doi",
        "url",
        "section",
        "citation_group",
        "citations",
    ]
    assert "from bib.bib" in err


def test_archive_path(capsys: pytest.CaptureFixture[str], corpus: tuple[Path, Manifest]) -> None:
    root, manifest = corpus
    rows = _refs(capsys, str(root / "eprints" / manifest.survey.filename), "--offline")
    assert {r["arxiv_id"] for r in rows} == {i.arxiv_id for i in manifest.papers}
    assert {r["how"] for r in rows} == {"eprint"}


def test_not_a_survey(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "notes.txt").write_text("no LaTeX here")
    assert main(["refs", str(tmp_path), "--offline"]) == 1
    assert "cannot read it as a survey" in capsys.readouterr().err
    assert main(["refs", str(tmp_path / "missing"), "--offline"]) == 2


BIBLATEX_MAIN = r"""\documentclass{article}
\usepackage[backend=biber,style=authoryear]{biblatex}
\addbibresource{library.bib}
\title{A biblatex survey}
\begin{document}
\section{Flows}
Normalizing flows \parencite[see][]{flowA,flowB} and \textcite{flowC}; also \autocite{flowD}.
\printbibliography
\end{document}
"""
BIBLATEX_BIB = r"""
@online{flowA, title = {Flow A}, eprinttype = {arxiv}, eprint = {1505.05770v6}}
@online{flowB, title = {Flow B}, eprint = {1605.08803}, eprinttype = {arXiv}, eprintclass = {cs.LG}}
@article{flowC, title = {Flow C}, doi = {10.48550/arXiv.1912.02762}}
@article{flowD, title = {Flow D}, journaltitle = {JMLR}, url = {https://arxiv.org/abs/1908.09257}}
"""


def test_biblatex_survey(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "main.tex").write_text(BIBLATEX_MAIN)
    (tmp_path / "library.bib").write_text(BIBLATEX_BIB)
    (tmp_path / "old.bib").write_text("@misc{stale, eprint = {2001.00001}}")
    rows = _refs(capsys, str(tmp_path), "--offline")
    assert [(r["key"], r["arxiv_id"], r["how"]) for r in rows] == [
        ("flowA", "1505.05770", "eprint"),
        ("flowB", "1605.08803", "eprint"),
        ("flowC", "1912.02762", "doi"),
        ("flowD", "1908.09257", "url"),
    ]


def test_two_main_files_read_only_the_main_ones_bibliography(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A supplement with its own \\documentclass and bibliography, and a stale .bib: only the
    main document's \\bibliography counts."""
    body = "\\begin{document}\n" + "Words. " * 50
    (tmp_path / "ms.tex").write_text(
        f"\\documentclass{{article}}\n{body}\\cite{{a}}\n\\bibliography{{refs}}\n\\end{{document}}"
    )
    (tmp_path / "supplement.tex").write_text(
        f"\\documentclass{{article}}\n{body}\\cite{{s}}\n\\bibliography{{supp}}\n\\end{{document}}"
    )
    (tmp_path / "refs.bib").write_text("@misc{a, title={A}, eprint={2101.00001}}")
    (tmp_path / "supp.bib").write_text("@misc{s, title={S}, eprint={2101.00002}}")
    (tmp_path / "refs_old.bib").write_text("@misc{a, title={A}, eprint={2101.00009}}")
    rows = _refs(capsys, str(tmp_path), "--offline")
    assert [(r["key"], r["arxiv_id"]) for r in rows] == [("a", "2101.00001")]


def _titles_only(folder: Path, manifest: Manifest) -> list[str]:
    """A survey citing two corpus papers by title alone (one with LaTeX markup and a typo),
    one paper arXiv does not have, and one entry that carries its id."""
    first, second, third = manifest.papers[:3]
    typo = second.title.replace(second.title.split()[-1], second.title.split()[-1][:-1], 1)
    bib = (
        f"@article{{t1, title = {{{{\\em {first.title}}}}}}}\n"
        f"@article{{t2, title = {{{typo}}}}}\n"
        "@book{book, title = {Gaussian Processes for Machine Learning}}\n"
        f"@article{{id, title = {{{third.title}}}, eprint = {{{third.arxiv_id}}}}}\n"
    )
    folder.mkdir()
    (folder / "main.tex").write_text(
        "\\documentclass{article}\n\\begin{document}\n\\bibliography{refs}\n\\end{document}"
    )
    (folder / "refs.bib").write_text(bib)
    return [first.arxiv_id, second.arxiv_id, third.arxiv_id]


def test_title_search_through_the_mirror(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], corpus: tuple[Path, Manifest]
) -> None:
    root, manifest = corpus
    first, second, third = _titles_only(tmp_path / "survey", manifest)
    with Mirror(root) as mirror:
        args = ["--set", f"arxiv.api_url={mirror.api_url}", "--set", "arxiv.delay_s=0"]
        offline = _refs(capsys, str(tmp_path / "survey"), "--offline", *args)
        assert mirror.requests_log == []
        rows = _refs(capsys, str(tmp_path / "survey"), *args)
        searched = len(mirror.requests_log)
    assert [r["how"] for r in offline] == ["unresolved", "unresolved", "unresolved", "eprint"]
    assert [(r["arxiv_id"], r["how"]) for r in rows] == [
        (first, "title_search"),
        (second, "title_search"),
        (None, "no_title_match"),
        (third, "eprint"),
    ]
    assert searched == 3


def test_title_search_stops_at_the_first_network_failure(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], corpus: tuple[Path, Manifest]
) -> None:
    root, manifest = corpus
    _titles_only(tmp_path / "survey", manifest)
    with Mirror(root) as mirror:
        mirror.inject("/api/query", [503, 503])
        args = ["--set", f"arxiv.api_url={mirror.api_url}", "--set", "arxiv.delay_s=0"]
        retry_once = ["--set", "arxiv.retries=1", "--set", "arxiv.backoff_s=0"]
        rows = _refs(capsys, str(tmp_path / "survey"), *args, *retry_once)
        assert len(mirror.requests_log) == 2  # one query, retried once, then no more
    assert [r["how"] for r in rows] == ["title_search_failed"] * 3 + ["eprint"]
