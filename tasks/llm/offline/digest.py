"""Offline handler for LongScope-style's per-paper digest (docs/design.md §9, §15): under each leaf
heading of the skeleton, the paper's sentences that best match the heading and its line,
the word budget split evenly over the leaves, no sentence used twice."""

from __future__ import annotations

import re

from lilo.tasks.config import OfflineSettings
from lilo.tasks.llm.offline._overlap import between
from lilo.tasks.llm.offline._tree import leaves, read_tree
from lilo.tasks.llm.offline.base import offline_reply
from lilo.tasks.llm.offline.extract import candidates, paragraphs, query_terms, select
from lilo.tasks.llm.types import Message

SIGNATURE = "Digest the paper below along the skeleton"

_WORDS_RE = re.compile(r"in about (\d+) words in all")


def matches(prompt: str) -> bool:
    return SIGNATURE in prompt


@offline_reply("digest", matches=matches)
def respond(messages: list[Message], offline: OfflineSettings) -> str:
    prompt = "\n".join(m["content"] for m in messages)
    tips = leaves(read_tree(between(prompt, "skeleton")))
    match = _WORDS_RE.search(prompt)
    cap = offline.max_words_per_reply
    budget = min(int(match.group(1)) if match else cap, cap) // max(len(tips), 1)
    pool = candidates(prompt, offline)
    taken: set[str] = set()
    out = []
    for node in tips:
        query = query_terms(f"{node.heading} {node.guide}")
        chosen = select(pool, query, budget, budget, taken=taken)
        if chosen:
            out.append(f"{'#' * node.level} {node.heading}\n{paragraphs(chosen)}")
    return "\n\n".join(out)
