"""The demo corpus's ground truth: what every item is, what the pipeline should do with it
(hostile items and their expected quarantine reason) and which facts each paper states."""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

__all__ = ["Fact", "Manifest", "ManifestItem", "load_manifest"]

MANIFEST_NAME = "manifest.json"


@dataclass(frozen=True)
class Fact:
    """A planted sentence: `term` (the method) has `metric` = `value` on `dataset`."""

    fact_id: str
    arxiv_id: str
    sentence: str
    term: str
    value: str
    dataset: str
    metric: str


@dataclass(frozen=True)
class ManifestItem:
    arxiv_id: str
    role: str  # survey | paper
    title: str
    abstract: str
    authors: tuple[str, ...]
    categories: tuple[str, ...]
    published: str  # ISO 8601, UTC
    topic: str | None  # the survey section that cites it; None for the survey
    filename: str  # under eprints/
    cite_key: str  # the survey's key for it; "" for the survey itself
    hostile: str | None  # pdf_only | unsafe_archive | not_utf8 | too_short
    expected_reason: str | None  # the quarantine reason the pipeline must record
    facts: tuple[Fact, ...] = ()


@dataclass(frozen=True)
class Manifest:
    seed: int
    items: tuple[ManifestItem, ...]

    @property
    def survey(self) -> ManifestItem:
        return next(i for i in self.items if i.role == "survey")

    @property
    def papers(self) -> tuple[ManifestItem, ...]:
        """Every cited item, hostile ones included."""
        return tuple(i for i in self.items if i.role == "paper")

    @property
    def good_papers(self) -> tuple[ManifestItem, ...]:
        return tuple(i for i in self.papers if i.hostile is None)

    @property
    def facts(self) -> tuple[Fact, ...]:
        return tuple(f for i in self.items for f in i.facts)

    def item(self, arxiv_id: str) -> ManifestItem:
        for candidate in self.items:
            if candidate.arxiv_id == arxiv_id:
                return candidate
        raise KeyError(f"{arxiv_id} is not in this corpus: check manifest.json")

    def to_json(self) -> str:
        return json.dumps(asdict(self), indent=2, ensure_ascii=False) + "\n"

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Manifest:
        items = []
        for raw in data["items"]:
            fields = {
                **raw,
                "authors": tuple(raw["authors"]),
                "categories": tuple(raw["categories"]),
                "facts": tuple(Fact(**f) for f in raw["facts"]),
            }
            items.append(ManifestItem(**fields))
        return cls(seed=data["seed"], items=tuple(items))


def load_manifest(corpus_dir: Path) -> Manifest:
    path = corpus_dir / MANIFEST_NAME
    if not path.exists():
        raise FileNotFoundError(f"{path} not found: write a corpus first (write_corpus)")
    return Manifest.from_dict(json.loads(path.read_text()))
