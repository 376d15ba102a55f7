"""Offline handler for LongScope-style's edits (docs/design.md §9, §15): a proposal adds a section
for each of the passages' frequent content words (at most two) that no heading carries;
a combination keeps the distinct operations of the edits shown, at most three."""

from __future__ import annotations

from lilo.tasks.config import OfflineSettings
from lilo.tasks.llm.offline._overlap import between
from lilo.tasks.llm.offline._tree import Edit, key, read_edits
from lilo.tasks.llm.offline.base import offline_reply
from lilo.tasks.llm.offline.extract import candidates, keywords, query_terms
from lilo.tasks.llm.offline.skeleton import guide
from lilo.tasks.llm.types import Message

PROPOSE = "Propose edits to the skeleton below that the papers call for"
COMBINE = "Combine the proposed edits below into one edit"

_ADDED, _KEPT, _TOPICS = 2, 3, 12


def matches(prompt: str) -> bool:
    return PROPOSE in prompt or COMBINE in prompt


@offline_reply("edit", matches=matches)
def respond(messages: list[Message], offline: OfflineSettings) -> str:
    prompt = "\n".join(m["content"] for m in messages)
    if COMBINE in prompt:
        ops: dict[tuple[str, str], Edit] = {}
        for op in read_edits(between(prompt, "edits")):
            ops.setdefault((op.kind, key(op.heading)), op)
        return "\n".join(
            f"{op.kind}: {op.heading}" + (f" | {op.guide}" if op.guide else "")
            for op in list(ops.values())[:_KEPT]
        )
    covered = query_terms(between(prompt, "skeleton"))
    pool = [c for c in candidates(prompt, offline) if c.weight > 0]
    fresh = [w for w in keywords((c.text for c in pool), _TOPICS) if w not in covered]
    return "\n".join(f"ADD: {w.capitalize()} | {guide(w)}" for w in fresh[:_ADDED])
