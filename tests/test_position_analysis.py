"""The position analysis against a known answer: with the offline engine's simulated
neglect of the prompt's middle switched on, S_single dips for the middle paper under Single,
and RAL-Writer's restatement brings the middle back (DESIGN §7, §9)."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from tasks.clean import clean_paper
from tasks.config import load_settings
from tasks.embeddings import Embedder
from tasks.llm import make_client
from tasks.methods import get_method
from tasks.qa import generate_qa
from tasks.records import PaperText, RawSource, Sample
from tasks.scoring import get_scorer
from tasks.synthetic import write_corpus


@pytest.fixture(scope="module")
def triplet(tmp_path_factory) -> tuple[str, list[PaperText]]:
    root = tmp_path_factory.mktemp("position")
    manifest = write_corpus(root / "corpus")
    settings = load_settings(None, {"data_dir": str(root / "data")})
    by_topic: dict[str, list[PaperText]] = {}
    for item in manifest.items:
        if item.role != "paper" or item.hostile:
            continue
        path = root / "corpus" / "eprints" / item.filename
        data = path.read_bytes()
        raw = RawSource(
            item.arxiv_id, hashlib.sha256(data).hexdigest(), str(path), len(data), "tar.gz"
        )
        paper = clean_paper(raw, root / "work", settings)
        assert isinstance(paper, PaperText)
        by_topic.setdefault(item.topic or "", []).append(paper)
    topic = sorted(by_topic)[0]
    return topic, by_topic[topic][:3]


def _single_by_position(method: str, topic: str, papers: list[PaperText], tmp_path: Path):
    settings = load_settings(None, {"data_dir": str(tmp_path), "llm.offline.middle_neglect": 1.0})
    llm, embedder = make_client(settings), Embedder(settings)
    ids = tuple(p.paper_id for p in papers)
    sample = Sample("s1", "v1", ids, topic, "survey", sum(p.words for p in papers), "command")
    qa = generate_qa(sample, papers, settings, llm, embedder).pairs
    generation = get_method(method, settings).run(sample, papers, 4000, llm, embedder)
    rows = get_scorer("consistency", settings).score(generation, sample, papers, qa, llm).rows
    return [next(r.value for r in rows if r.score == f"single_pos{i}") for i in (1, 2, 3)]


def test_simulated_neglect_shows_lost_in_the_middle(triplet, tmp_path):
    first, middle, last = _single_by_position("single", *triplet, tmp_path)
    assert middle < first and middle < last


def test_ral_writer_recovers_the_middle(triplet, tmp_path):
    single_middle = _single_by_position("single", *triplet, tmp_path / "a")[1]
    ral_middle = _single_by_position("ral_writer", *triplet, tmp_path / "b")[1]
    assert ral_middle > single_middle
