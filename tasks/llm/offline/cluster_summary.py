"""Offline handler for Markov-cluster's cluster summary (docs/design.md §9, §15): a heading from the
passages' most frequent content words, then the passages' sentences that best carry them,
within the word limit the prompt states."""

from __future__ import annotations

import re

from lilo.tasks.config import OfflineSettings
from lilo.tasks.llm.offline._extract import candidates, keywords, query_terms, select
from lilo.tasks.llm.types import Message
from lilo.tasks.paper_tags import parse_paper_blocks

SIGNATURE = "Summarise the common thread of the passages below"

_WORDS_RE = re.compile(r"in at most (\d+) words")


def matches(prompt: str) -> bool:
    return SIGNATURE in prompt


def respond(messages: list[Message], offline: OfflineSettings) -> str:
    prompt = "\n".join(m["content"] for m in messages)
    match = _WORDS_RE.search(prompt)
    budget = int(match.group(1)) if match else 150
    pool = [c for c in candidates(prompt, offline) if c.weight > 0]
    top = keywords((c.text for c in pool), 4)
    if not top:
        top = keywords((t for _, t in parse_paper_blocks(prompt)), 4) or ["the papers"]
    chosen = select(pool, query_terms(" ".join(top)), budget, budget)
    heading = ", ".join(w.capitalize() for w in top[:3])
    return f"## {heading}\n" + " ".join(c.text for c in chosen)
