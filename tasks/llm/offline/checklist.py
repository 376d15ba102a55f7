"""Offline handler: the checklist judge (docs/design.md §8, §9). Each item is graded by the feature
its question points to (`_features.py`), mapped to the score tiers; the reply is the list
of {checklist_id, reason, evaluation_score} both lilo's and the benchmark's templates ask
for."""

from __future__ import annotations

import json

from lilo.tasks.config import OfflineSettings
from lilo.tasks.llm.offline._features import checklist_items, feature_for, features, responses
from lilo.tasks.llm.offline._overlap import tier
from lilo.tasks.llm.offline.base import offline_reply
from lilo.tasks.llm.types import Message

__all__ = ["matches", "respond"]


def matches(prompt: str) -> bool:
    return "checklist_id" in prompt and "evaluation_score" in prompt


@offline_reply("checklist", matches=matches, priority=1)
def respond(messages: list[Message], offline: OfflineSettings) -> str:
    prompt = "\n".join(m["content"] for m in messages)
    found = features(responses(prompt, ("response",))[0])
    graded = []
    for checklist_id, question in checklist_items(prompt):
        name = feature_for(question)
        value = found[name]
        graded.append(
            {
                "checklist_id": checklist_id,
                "reason": f"{name}: {value:.2f} of the target",
                "evaluation_score": tier(value),
            }
        )
    return json.dumps(graded, ensure_ascii=False)
