"""Known answers on the synthetic corpus: a cleaned triplet of one topic's papers, where each
planted fact sits in the input the methods read, and whether a summary kept it. The position
bench (`bench/methods_position.py`) and the position tests measure methods with these."""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from pathlib import Path

from lilo.tasks.clean import clean_paper
from lilo.tasks.config_loading import load_settings
from lilo.tasks.records import PaperText, RawSource
from lilo.tasks.synthetic.corpus import write_corpus
from lilo.tasks.synthetic.manifest import Fact
from lilo.tasks.text import split_sentences

__all__ = ["BINS", "Located", "cleaned_triplet", "locate", "recall_by_bin", "recalled"]

BINS = ("start", "middle", "end")


@dataclass(frozen=True)
class Located:
    fact: Fact
    bin: str


def cleaned_triplet(root: Path) -> tuple[str, list[PaperText], list[Fact]]:
    """The first topic's first three papers, cleaned, and their planted facts."""
    manifest = write_corpus(root / "corpus")
    settings = load_settings(None, {"data_dir": str(root / "data")})
    by_topic: dict[str, list[tuple[PaperText, tuple[Fact, ...]]]] = {}
    for item in manifest.items:
        if item.role != "paper" or item.hostile:
            continue
        path = root / "corpus" / "eprints" / item.filename
        data = path.read_bytes()
        raw = RawSource(
            item.arxiv_id, hashlib.sha256(data).hexdigest(), str(path), len(data), "tar.gz"
        )
        paper = clean_paper(raw, root / "work", settings.clean)
        if not isinstance(paper, PaperText):
            raise RuntimeError(f"synthetic paper {item.arxiv_id} did not clean: {paper}")
        by_topic.setdefault(item.topic or "", []).append((paper, item.facts))
    topic = sorted(by_topic)[0]
    chosen = by_topic[topic][:3]
    return topic, [p for p, _ in chosen], [f for _, fs in chosen for f in fs]


def locate(papers: list[PaperText], facts: list[Fact]) -> list[Located]:
    """Each fact's third of the whole input: its value's place next to its dataset."""
    total = sum(len(p.text) for p in papers)
    offset = {p.paper_id: sum(len(q.text) for q in papers[:i]) for i, p in enumerate(papers)}
    text = {p.paper_id: p.text for p in papers}
    out = []
    for fact in facts:
        body = text[fact.arxiv_id]
        spots = [m.start() for m in re.finditer(re.escape(fact.value), body)]
        near = [s for s in spots if fact.dataset in body[max(0, s - 300) : s + 300]]
        if near:
            x = (offset[fact.arxiv_id] + near[0]) / total
            out.append(Located(fact, BINS[min(int(x * 3), 2)]))
    return out


def recalled(summary: str, fact: Fact) -> bool:
    """One sentence of the summary holds both the fact's value and its dataset."""
    return any(fact.value in s and fact.dataset in s for s in split_sentences(summary))


def recall_by_bin(summary: str, located: list[Located]) -> dict[str, float]:
    """Share of the planted facts of each third that the summary kept (NaN: none there)."""
    out = {}
    for b in BINS:
        hits = [recalled(summary, f.fact) for f in located if f.bin == b]
        out[b] = sum(hits) / len(hits) if hits else float("nan")
    return out
