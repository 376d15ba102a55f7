"""What the probes read and write: one example (`ProbeItem`, a `dim_probe_items` row), one
prompt to ask (`ProbeUnit`) and its answer (`ProbeAnswer`, a `fct_probe_answers` row)."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from typing import Any

__all__ = [
    "Document",
    "ProbeAnswer",
    "ProbeItem",
    "ProbeUnit",
    "content_sha256",
    "nonempty_text",
]

Document = dict[str, str]  # {"title": ..., "text": ...}


def nonempty_text(value: Any, what: str) -> str:
    """`value` when it is a string with more than whitespace; ValueError naming `what`."""
    if not isinstance(value, str) or not value.strip():
        raise ValueError(f"{what} is not a non-empty string")
    return value


def content_sha256(*parts: Any) -> str:
    return hashlib.sha256(json.dumps(parts, ensure_ascii=False).encode()).hexdigest()


@dataclass(frozen=True)
class ProbeItem:
    """kv: `question` is the key, `answers` (its value,), `context` the [key, value] records
    in order, the gold pair among them. mdqa: `gold` the gold document, `context` the
    distractor documents in order, the gold one left out."""

    item_id: str
    probe_set: str
    task: str  # kv | mdqa
    size: int
    line: int
    source: str
    question: str
    answers: tuple[str, ...]
    context: tuple[Any, ...]
    gold: Document | None = None
    sha256: str = field(default="")

    def __post_init__(self) -> None:
        if not self.sha256:
            digest = content_sha256(self.question, self.answers, self.gold, self.context)
            object.__setattr__(self, "sha256", digest)


@dataclass(frozen=True)
class ProbeUnit:
    """One prompt to ask: an item in a setting (position | closed_book | oracle), with the
    gold item at `position` for the position setting."""

    item: ProbeItem
    variant: str
    setting: str
    position: int | None
    query_aware: bool


@dataclass(frozen=True)
class ProbeAnswer:
    """One reply and its verdict by the authors' metric (`correct`, None when the call
    failed), and whether it echoes the prompt (`echo`, tasks/probes/metric.py; None for an
    empty or failed reply)."""

    answer_id: str
    item_id: str
    task: str
    probe_set: str
    variant: str
    size: int
    setting: str
    position: int | None
    query_aware: bool
    prompts: str
    backbone: str
    prediction: str
    correct: bool | None
    error: str
    echo: bool | None = None
