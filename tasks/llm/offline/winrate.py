"""Offline handler: the pairwise win-rate judge (docs/design.md §8). Per checklist item, the
summary whose feature for that item (`_features.py`) is clearly higher wins; "E" when the
two are within `_TIE`."""

from __future__ import annotations

import json

from lilo.tasks.config import OfflineSettings
from lilo.tasks.llm.offline._features import checklist_items, feature_for, features, responses
from lilo.tasks.llm.offline.base import offline_reply
from lilo.tasks.llm.types import Message

__all__ = ["matches", "respond"]

_TIE = 0.05


def matches(prompt: str) -> bool:
    return "checklist_id" in prompt and '"winner"' in prompt


@offline_reply("winrate", matches=matches, priority=1)
def respond(messages: list[Message], offline: OfflineSettings) -> str:
    prompt = "\n".join(m["content"] for m in messages)
    a, b = (features(text) for text in responses(prompt, ("response_a", "response_b")))
    verdicts = []
    for checklist_id, question in checklist_items(prompt):
        name = feature_for(question)
        diff = a[name] - b[name]
        winner = "E" if abs(diff) <= _TIE else ("A" if diff > 0 else "B")
        reason = f"{name}: A {a[name]:.2f}, B {b[name]:.2f}"
        verdicts.append({"checklist_id": checklist_id, "reason": reason, "winner": winner})
    return json.dumps(verdicts, ensure_ascii=False)
