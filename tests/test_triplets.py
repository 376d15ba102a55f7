from pathlib import Path

import numpy as np
import pytest

from lilo.tasks.clean.extract import extract_archive
from lilo.tasks.clean.latex import clean_source
from lilo.tasks.config import Settings
from lilo.tasks.records import CitationGroup, PaperText, Sample, content_id
from lilo.tasks.samples.citations import citation_groups, find_citations
from lilo.tasks.samples.references import read_references
from lilo.tasks.samples.triplets import build_samples
from lilo.tasks.synthetic.corpus import SURVEY_ID, write_corpus

SETTINGS = Settings()


def _paper(paper_id: str, words: int = 1000) -> PaperText:
    return PaperText(
        paper_id=paper_id,
        title=paper_id,
        text="",
        words=words,
        tokens=words,
        main_file="main.tex",
        cleaner_version="test",
        source_sha256="",
        content_sha256="",
    )


def _group(kind: str, paper_ids: str, section: str = "Methods") -> CitationGroup:
    ids = tuple(paper_ids)
    return CitationGroup(content_id(kind, ids), kind, section, "", ids, ids)


def _vectors(**angles: float) -> dict[str, np.ndarray]:
    """2-d unit vectors at the given angles (degrees): close angles, close papers."""
    return {k: np.array([np.cos(np.radians(a)), np.sin(np.radians(a))]) for k, a in angles.items()}


def _run(
    groups: list[CitationGroup],
    papers: dict[str, PaperText],
    embeddings: dict[str, np.ndarray],
    settings: Settings = SETTINGS,
) -> list[Sample]:
    return build_samples(groups, papers, embeddings, settings.samples, "v1", "survey-1")


ANGLES = {"a": 0.0, "b": 60.0, "c": 120.0, "d": 1.0, "e": 2.0, "f": 90.0}


def test_command_groups_come_before_closer_paragraph_triplets() -> None:
    papers = {k: _paper(k) for k in "abcdef"}
    groups = [_group("paragraph", "adebcf"), _group("command", "abc")]
    samples = _run(groups, papers, _vectors(**ANGLES))
    assert [(s.paper_ids, s.group_kind) for s in samples] == [
        (("a", "b", "c"), "command"),
        (("d", "e", "f"), "paragraph"),
    ]


def test_closest_triplet_first_in_citation_order() -> None:
    papers = {k: _paper(k) for k in "abcdef"}
    angles = {"a": 0.0, "b": 100.0, "c": 2.0, "d": 130.0, "e": 1.0, "f": 160.0}
    samples = _run([_group("paragraph", "abcdef")], papers, _vectors(**angles))
    assert [s.paper_ids for s in samples] == [("a", "c", "e"), ("b", "d", "f")]


def test_equal_scores_keep_group_order() -> None:
    papers = {k: _paper(k) for k in "abcdef"}
    same = _vectors(**dict.fromkeys("abcdef", 0.0))
    groups = [_group("subsection", "def"), _group("subsection", "abc")]
    assert [s.paper_ids for s in _run(groups, papers, same)] == [("d", "e", "f"), ("a", "b", "c")]


def test_no_paper_reused_unless_configured() -> None:
    papers = {k: _paper(k) for k in "abcde"}
    groups = [_group("command", "abc"), _group("command", "cde"), _group("paragraph", "abcde")]
    vectors = _vectors(**ANGLES)
    once = _run(groups, papers, vectors)
    assert [s.paper_ids for s in once] == [("a", "b", "c")]
    twice = _run(
        groups, papers, vectors, Settings().with_overrides({"samples.max_samples_per_paper": 2})
    )
    used = [p for s in twice for p in s.paper_ids]
    assert max(used.count(p) for p in used) == 2
    assert len({frozenset(s.paper_ids) for s in twice}) == len(twice)


def test_absent_papers_never_enter() -> None:
    papers = {k: _paper(k) for k in "acdf"}
    groups = [_group("command", "abcd"), _group("command", "bef")]
    samples = _run(groups, papers, _vectors(**ANGLES))
    assert [s.paper_ids for s in samples] == [("a", "c", "d")]


def test_sample_fields_and_determinism() -> None:
    papers = {"a": _paper("a", 100), "b": _paper("b", 200), "c": _paper("c", 300)}
    groups = [_group("paragraph", "cab", section="Kernel choice")]
    vectors = _vectors(**ANGLES)
    (sample,) = _run(groups, papers, vectors)
    assert sample.paper_ids == ("c", "a", "b")
    assert sample.sample_id == content_id("v1", ("c", "a", "b"))
    assert sample.topic == "Kernel choice"
    assert (sample.input_words, sample.dataset_version, sample.survey_id) == (600, "v1", "survey-1")
    assert sample.group_kind == "paragraph"
    assert _run(groups, papers, vectors) == [sample]


def test_missing_embedding_is_an_error() -> None:
    papers = {k: _paper(k) for k in "abc"}
    with pytest.raises(ValueError, match="embed every paper"):
        _run([_group("command", "abc")], papers, _vectors(a=0, b=1))


def test_synthetic_survey_end_to_end(tmp_path: Path) -> None:
    """The demo survey, unpacked and cleaned as the pipeline does, yields one sample per topic
    from its `\\cite{a,b,c}` commands; the hostile items never enter."""
    manifest = write_corpus(tmp_path / "corpus")
    folder = tmp_path / "survey"
    extract_archive(
        tmp_path / "corpus" / "eprints" / manifest.survey.filename, folder, SETTINGS.clean
    )
    cleaned = clean_source(folder, SETTINGS.clean)
    references = read_references(folder, cleaned.main_file)
    key_to_id = {r.key: r.arxiv_id for r in references if r.arxiv_id}
    groups = citation_groups(find_citations(cleaned.text), key_to_id, survey_id=SURVEY_ID)
    usable = [i for i in manifest.items if i.role == "paper" and i.hostile is None]
    papers = {i.arxiv_id: _paper(i.arxiv_id) for i in usable}
    rng = np.random.default_rng(0)
    embeddings = {i.arxiv_id: rng.normal(size=8) for i in usable}

    samples = build_samples(groups, papers, embeddings, SETTINGS.samples, "v1", SURVEY_ID)

    topic_of = {i.arxiv_id: i.topic for i in usable}
    assert len(samples) == 3
    for sample in samples:
        assert sample.group_kind == "command"
        assert {topic_of[p] for p in sample.paper_ids} == {sample.topic}
    assert len({p for s in samples for p in s.paper_ids}) == 9
