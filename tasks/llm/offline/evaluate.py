"""Offline handler: the QA judge (docs/design.md §8, §9 "judgments by overlap mapped to the score
tiers"): the share of the gold answer's key tokens found in the predicted answer. Both
lilo's template and the benchmark's show them in `<gold>` and `<predict>`."""

from __future__ import annotations

import json

from lilo.tasks.config import OfflineSettings
from lilo.tasks.llm.offline._overlap import between, overlap, tier
from lilo.tasks.llm.offline.base import offline_reply
from lilo.tasks.llm.types import Message

__all__ = ["matches", "respond"]

_SHOW_MISSING = 8


def matches(prompt: str) -> bool:
    return "<gold>" in prompt and "<predict>" in prompt


@offline_reply("evaluate", matches=matches, priority=1)
def respond(messages: list[Message], offline: OfflineSettings) -> str:
    prompt = "\n".join(m["content"] for m in messages)
    ratio, missing = overlap(between(prompt, "gold"), between(prompt, "predict"))
    reason = f"{ratio:.0%} of the gold answer's key points (numbers, terms, content words) found"
    if missing:
        reason += f"; missing: {', '.join(sorted(missing)[:_SHOW_MISSING])}"
    return json.dumps({"reason": reason, "score": tier(ratio)})
