"""Offline handler: the consistency evaluator (DESIGN §8, §9 "judgments by overlap mapped to
the score tiers"): the share of the gold answer's key tokens found in the candidate."""

from __future__ import annotations

import json

from tasks.config import Settings
from tasks.llm.client import Message
from tasks.llm.offline._overlap import between, overlap, tier

__all__ = ["SIGNATURE", "respond"]

SIGNATURE = "Grade the candidate answer against the gold answer"

_SHOW_MISSING = 8


def respond(messages: list[Message], settings: Settings) -> str:
    prompt = next(m["content"] for m in messages if SIGNATURE in m["content"])
    ratio, missing = overlap(between(prompt, "gold_answer"), between(prompt, "candidate_answer"))
    reason = f"{ratio:.0%} of the gold answer's key points (numbers, terms, content words) found"
    if missing:
        reason += f"; missing: {', '.join(sorted(missing)[:_SHOW_MISSING])}"
    return json.dumps({"reason": reason, "score": tier(ratio)})
