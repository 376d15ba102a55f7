"""The demo corpus: reproducible bytes, papers of the right length with every LaTeX feature
the cleaner must handle, planted facts present verbatim, a survey that co-cites each topic,
and one hostile item per quarantine reason."""

from __future__ import annotations

import re
import tarfile
import time
from pathlib import Path

import pytest

from lilo.tasks.synthetic import SURVEY_ID, Manifest, load_manifest, write_corpus
from lilo.tasks.text import count_words, split_sentences


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Manifest]:
    root = tmp_path_factory.mktemp("corpus")
    return root, write_corpus(root)


def _members(path: Path) -> dict[str, bytes]:
    with tarfile.open(path, mode="r:gz") as tar:
        return {m.name: tar.extractfile(m).read() for m in tar.getmembers()}  # type: ignore[union-attr]


def _texts(root: Path, filename: str) -> dict[str, str]:
    return {k: v.decode() for k, v in _members(root / "eprints" / filename).items()}


def _body(files: dict[str, str]) -> str:
    """What a cleaner keeps, roughly: inputs inlined, comments, preamble, bibliography and
    appendix dropped. Enough to check the word budget the corpus promises."""
    main = next(v for v in files.values() if "\\documentclass" in v)

    def inline(match: re.Match[str]) -> str:
        name = match.group(1)
        return files[name if name.endswith(".tex") else f"{name}.tex"]

    text = re.sub(r"\\(?:input|include)\{([^}]+)\}", inline, main)
    text = re.sub(r"\\begin\{comment\}.*?\\end\{comment\}|\\iffalse.*?\\fi", "", text, flags=re.S)
    text = re.sub(r"(?<!\\)%.*", "", text)
    text = text.split("\\begin{document}", 1)[1]
    return re.split(r"\\bibliographystyle|\\appendix", text)[0]


def test_same_seed_same_bytes(tmp_path: Path) -> None:
    start = time.perf_counter()
    first = write_corpus(tmp_path / "a")
    assert time.perf_counter() - start < 1.0
    second = write_corpus(tmp_path / "b")
    assert first == second == load_manifest(tmp_path / "a")
    files_a = sorted(p.relative_to(tmp_path / "a") for p in (tmp_path / "a").rglob("*"))
    assert files_a == sorted(p.relative_to(tmp_path / "b") for p in (tmp_path / "b").rglob("*"))
    for rel in files_a:
        if (tmp_path / "a" / rel).is_file():
            assert (tmp_path / "a" / rel).read_bytes() == (tmp_path / "b" / rel).read_bytes()
    other = write_corpus(tmp_path / "c", seed=1)
    assert other.good_papers[0].facts != first.good_papers[0].facts


def test_inventory(corpus: tuple[Path, Manifest]) -> None:
    _, manifest = corpus
    assert manifest.survey.arxiv_id == SURVEY_ID
    good = manifest.good_papers
    assert len(good) == 12
    topics = {p.topic for p in good}
    assert len(topics) == 3
    assert all(sum(p.topic == t for p in good) == 4 for t in topics)
    hostile = {p.hostile: p.expected_reason for p in manifest.papers if p.hostile}
    assert hostile == {
        "pdf_only": "no_latex_source",
        "unsafe_archive": "unsafe_archive",
        "not_utf8": "not_utf8",
        "too_short": "too_short",
    }
    ids = [i.arxiv_id for i in manifest.items]
    assert len(set(ids)) == len(ids)
    assert all(re.fullmatch(r"2601\.\d{5}", i) for i in ids)
    for item in manifest.items:
        assert item.title and item.abstract and item.authors and item.categories
        assert item.published.startswith("2026-01-")


def test_papers_have_the_promised_shape(corpus: tuple[Path, Manifest]) -> None:
    root, manifest = corpus
    for paper in manifest.good_papers:
        files = _texts(root, paper.filename)
        main = next(v for v in files.values() if "\\documentclass" in v)
        everything = "\n".join(files.values())
        for needle in (
            "\\newcommand",
            "\\title{",
            "\\begin{document}",
            "\\input{sections/intro}",
            "\\input{sections/method.tex}",
            "\\begin{abstract}",
            "\\section{",
            "\\subsection{",
            "\\begin{equation}",
            "\\begin{table}",
            "\\begin{itemize}",
            "\\emph{",
            "\\cite{",
            "\\appendix",
            "\\bibliography{refs}",
        ):
            assert needle in everything, (paper.arxiv_id, needle)
        assert re.search(r"^%", main, re.M) and re.search(r"\S +% ", everything)
        assert main.index("\\newcommand") < main.index("\\begin{document}")
        assert "@article{" in files["refs.bib"]
        words = count_words(_body(files))
        assert 2600 <= words <= 3500, (paper.arxiv_id, words)


def test_prose_varies(corpus: tuple[Path, Manifest]) -> None:
    root, manifest = corpus
    vocab = {}
    for paper in manifest.good_papers:
        sentences = split_sentences(_body(_texts(root, paper.filename)))
        assert len(set(sentences)) / len(sentences) > 0.97
        vocab.setdefault(paper.topic, set()).update(
            w.lower() for w in re.findall(r"[A-Za-z-]{6,}", " ".join(sentences))
        )
    # The templates are shared; the topic words are not.
    for topic, words in vocab.items():
        others = set().union(*(w for t, w in vocab.items() if t != topic))
        assert len(words - others) >= 60, topic


def test_facts_are_planted_verbatim(corpus: tuple[Path, Manifest]) -> None:
    root, manifest = corpus
    for paper in manifest.good_papers:
        assert 6 <= len(paper.facts) <= 10
        body = _body(_texts(root, paper.filename))
        for fact in paper.facts:
            assert fact.arxiv_id == paper.arxiv_id
            assert fact.sentence in body, fact
            assert fact.term in fact.sentence and fact.value in fact.sentence
            assert fact.dataset in fact.sentence
    assert len({f.fact_id for f in manifest.facts}) == len(manifest.facts) == 96
    # One answer per cross-paper question: values differ between a topic's papers.
    by_question: dict[tuple[str | None, str, str], set[str]] = {}
    for paper in manifest.good_papers:
        for fact in paper.facts:
            by_question.setdefault((paper.topic, fact.dataset, fact.metric), set()).add(fact.value)
    assert all(len(values) == 4 for values in by_question.values())


def test_survey_cocites_each_topic(corpus: tuple[Path, Manifest]) -> None:
    root, manifest = corpus
    files = _texts(root, manifest.survey.filename)
    entries = re.findall(r"@article\{([^,]+),(.*?)\n\}", files["refs.bib"], re.S)
    assert len(entries) == len(manifest.papers)
    for _, entry in entries:
        assert "archivePrefix = {arXiv}" in entry and re.search(r"eprint = \{2601\.\d{5}\}", entry)
    main = files["survey.tex"]
    cited = {k for group in re.findall(r"\\cite[pt]?\{([^}]+)\}", main) for k in group.split(",")}
    assert cited == {p.cite_key for p in manifest.papers}
    topic_of = {p.cite_key: p.topic for p in manifest.papers}
    triples = [g.split(",") for g in re.findall(r"\\cite\{([^}]+)\}", main) if g.count(",") == 2]
    assert len(triples) == 3
    assert all(len({topic_of[k] for k in keys}) == 1 for keys in triples)
    assert "\\citep{" in main and "Acknowledgements" in main


def test_hostile_items(corpus: tuple[Path, Manifest]) -> None:
    root, manifest = corpus
    by_kind = {p.hostile: root / "eprints" / p.filename for p in manifest.papers if p.hostile}
    assert by_kind["pdf_only"].read_bytes().startswith(b"%PDF-")
    assert "../escape.tex" in _members(by_kind["unsafe_archive"])
    raw = _members(by_kind["not_utf8"])
    main = next(v for v in raw.values() if "\\documentclass".encode("utf-16-le") in v)
    assert not main.startswith((b"\xff\xfe", b"\xfe\xff"))  # no byte-order mark
    assert "r\u00e9sum\u00e9".encode("utf-16-le") in main
    with pytest.raises(UnicodeDecodeError):
        main.decode("utf-8")
    short = {k: v.decode() for k, v in _members(by_kind["too_short"]).items()}
    assert "\\begin{document}" in "".join(short.values())
    assert count_words(_body(short)) < 2000
    assert all(not p.facts for p in manifest.papers if p.hostile)


def test_manifest_round_trips(corpus: tuple[Path, Manifest]) -> None:
    root, manifest = corpus
    assert load_manifest(root) == manifest
    assert manifest.item(manifest.good_papers[0].arxiv_id) == manifest.good_papers[0]
    with pytest.raises(KeyError, match="not in this corpus"):
        manifest.item("9999.99999")
    with pytest.raises(FileNotFoundError, match="write_corpus"):
        load_manifest(root / "missing")


def test_the_small_corpus_has_shorter_papers_under_ids_of_its_own(tmp_path):
    """`lilo demo --local-model` reads it: the same topics at a fifth of the prose, numbered
    2602.* so that it never mixes with the full corpus in one warehouse."""
    full = write_corpus(tmp_path / "full")
    small = write_corpus(tmp_path / "small", scale=0.2)
    assert small.survey.arxiv_id == "2602.00100"
    assert [i.arxiv_id.replace("2602.", "2601.") for i in small.items] == [
        i.arxiv_id for i in full.items
    ]
    size = {
        name: sum((tmp_path / name / "eprints" / i.filename).stat().st_size for i in m.items)
        for name, m in (("full", full), ("small", small))
    }
    assert size["small"] < 0.8 * size["full"]  # gzipped: tables and bibliographies stay
