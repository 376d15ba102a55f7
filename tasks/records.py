"""The records tasks return and flows write. Plain frozen dataclasses: picklable, so tasks
can run on threads, processes or a distributed runner."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

import numpy as np

__all__ = [
    "QADecision",
    "DatasetStats",
    "SurveyStats",
    "CitationGroup",
    "Generation",
    "LLMCall",
    "PaperText",
    "QAPair",
    "Quarantine",
    "RawSource",
    "Sample",
    "ScoreRow",
    "content_id",
]


def content_id(*parts: Any) -> str:
    """A stable id from content: the key of every idempotent upsert."""
    blob = json.dumps(parts, sort_keys=True, default=str, ensure_ascii=False)
    return hashlib.sha256(blob.encode()).hexdigest()[:24]


@dataclass(frozen=True)
class Quarantine:
    """An item that did not make it through a stage, and why. Never silently dropped."""

    item_id: str
    stage: str
    reason: str
    detail: str = ""


@dataclass(frozen=True)
class RawSource:
    arxiv_id: str
    sha256: str
    path: str
    size_bytes: int
    format: str  # tar.gz | tar | tex.gz | pdf | unknown
    title: str = ""
    categories: str = ""
    role: str = "paper"  # paper | survey


@dataclass(frozen=True)
class PaperText:
    """A cleaned paper, ready for samples and prompts (docs/design.md §4)."""

    paper_id: str
    title: str
    text: str
    words: int
    tokens: int
    main_file: str
    cleaner_version: str
    source_sha256: str
    content_sha256: str
    categories: str = ""
    removed: dict[str, int] = field(default_factory=dict)
    warnings: tuple[str, ...] = ()


@dataclass(frozen=True)
class Sample:
    sample_id: str
    dataset_version: str
    paper_ids: tuple[str, ...]
    topic: str
    survey_id: str
    input_words: int
    group_kind: str  # command | paragraph | subsection
    # An imported benchmark's papers in the order its group folder's listing gave them at
    # import (the order the reference reads them in); None for lilo's own samples.
    listing_order: tuple[str, ...] | None = None


@dataclass(frozen=True)
class QAPair:
    qa_id: str
    sample_id: str
    kind: str  # single | cross
    paper_ids: tuple[str, ...]
    question: str
    answer: str
    evidence: tuple[dict[str, str], ...]
    status: str  # approved | pending | rejected | filtered | duplicate | invalid
    round: int
    reviewer: str
    reason: str
    prompt_version: str
    backbone: str


@dataclass(frozen=True)
class Generation:
    generation_id: str
    sample_id: str
    method: str
    method_args: dict[str, Any]
    target_words: int
    backbone: str
    text: str
    words: int
    variant: str = ""
    rotation: int = 0
    # The sample's paper ids in the order this generation read them (its rotation applied).
    papers_read: tuple[str, ...] = ()
    plan: tuple[str, ...] = ()
    restated: tuple[dict[str, Any], ...] = ()
    # A method's intermediate structure (Markov-cluster, RAPID-style, LongScope-style).
    structure: dict[str, Any] = field(default_factory=dict)
    tokens_in: int = 0
    tokens_out: int = 0
    latency_s: float = 0.0
    llm_calls: int = 0
    error: str = ""
    # What its calls' tokens cost (`LLMCall.cost`), cached ones included; None: unpriced.
    cost: float | None = None

    def __post_init__(self) -> None:
        # Read back from the warehouse, the JSON column arrives as text (or NULL).
        if not isinstance(self.structure, dict):
            object.__setattr__(self, "structure", json.loads(self.structure or "{}"))


@dataclass(frozen=True)
class ScoreRow:
    """Long score rows: a new score adds rows, not columns."""

    generation_id: str
    score: str
    value: float
    detail: dict[str, Any] = field(default_factory=dict)
    judge: str | None = None  # backend:model of the LLM judge; None for computed scores


@dataclass(frozen=True)
class LLMCall:
    key: str
    backend: str
    model: str
    purpose: str
    tokens_in: int
    tokens_out: int
    latency_s: float
    cached: bool
    request: str  # the messages and parameters, JSON
    response: str
    # Why the reply ended: "stop", or "length" (cut at its budget); "" in logs written
    # before it was kept.
    finish_reason: str = ""
    # Configured secrets the endpoint's reply held, replaced by `[redacted]` (tasks/redact.py).
    redacted: int = 0
    # What the call's tokens cost at its endpoint's price (`llm.prices`), None when the model
    # has no price; a call served from the cache was paid for when it was made.
    cost: float | None = None
    # Made through OpenAI's Batch API (tasks/llm/batch.py), at the batch price.
    batched: bool = False


@dataclass(frozen=True)
class CitationGroup:
    group_id: str
    kind: str  # command | paragraph | subsection
    section: str
    subsection: str
    cite_keys: tuple[str, ...]
    paper_ids: tuple[str, ...]  # in first-citation order


@dataclass(frozen=True)
class SurveyStats:
    survey_id: str
    title: str
    references: int
    resolved: int
    samples: int

    @property
    def resolved_rate(self) -> float:
        return self.resolved / self.references if self.references else 0.0


@dataclass(frozen=True)
class DatasetStats:
    dataset_version: str
    number: int | None  # None while the version is not written yet
    input_words: tuple[int, ...]  # one per sample
    papers: int
    surveys: tuple[SurveyStats, ...]
    how: dict[str, int]  # how references were resolved (or why not), over its surveys

    @property
    def samples(self) -> int:
        return len(self.input_words)

    def words_summary(self) -> dict[str, float]:
        """min, quartiles, mean and max of input words per sample (zeros when empty)."""
        words = np.array(self.input_words or (0,), dtype=float)
        q = np.percentile(words, [0, 25, 50, 75, 100])
        return {
            "min": q[0],
            "p25": q[1],
            "median": q[2],
            "mean": float(words.mean()),
            "p75": q[3],
            "max": q[4],
        }


@dataclass(frozen=True)
class QADecision:
    decision_id: str
    qa_id: str
    sample_id: str
    action: str  # approve | reject | edit
    reviewer: str
    channel: str  # auto | ui | cli | file
    decided_at: datetime
    question: str
    answer: str
    evidence: tuple[dict[str, str], ...]
    original_question: str
    original_answer: str
    reason: str
