"""Offline handler for LongScope-style's skeleton judge (docs/design.md §9, §15). structure: 10 for
six top-level sections, 2 less per section more or fewer, 2 less per repeated heading;
descriptions: 10 times the share of sections whose line says both what to extract and how
to analyse it. JSON, as the prompt asks."""

from __future__ import annotations

import json

from lilo.tasks.config import OfflineSettings
from lilo.tasks.llm.offline._overlap import between
from lilo.tasks.llm.offline._tree import key, read_tree
from lilo.tasks.llm.offline.base import offline_reply
from lilo.tasks.llm.types import Message

SIGNATURE = "Rate the skeleton below on two scales from 0 to 10"

_BEST_SECTIONS = 6


def matches(prompt: str) -> bool:
    return SIGNATURE in prompt


@offline_reply("edit_score", matches=matches)
def respond(messages: list[Message], offline: OfflineSettings) -> str:
    prompt = "\n".join(m["content"] for m in messages)
    nodes = [n for n in read_tree(between(prompt, "skeleton")) if n.level > 1]
    tops = sum(n.level == 2 for n in nodes)
    repeated = len(nodes) - len({key(n.heading) for n in nodes})
    structure = max(0, 10 - 2 * abs(tops - _BEST_SECTIONS) - 2 * repeated)
    described = [n for n in nodes if "extract" in n.guide.lower() and "analys" in n.guide.lower()]
    descriptions = round(10 * len(described) / len(nodes), 1) if nodes else 0.0
    return json.dumps({"structure": structure, "descriptions": descriptions})
