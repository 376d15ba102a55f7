"""Offline handler: the QA filter pass (docs/design.md §6). Keeps a pair unless its question is
yes/no-shaped, its answer is trivially short, or the answer's figures are not in the
papers shown."""

from __future__ import annotations

import json

from lilo.tasks.config import OfflineSettings
from lilo.tasks.llm.offline._overlap import between, numbers
from lilo.tasks.llm.offline.base import offline_reply
from lilo.tasks.llm.types import Message
from lilo.tasks.paper_tags import parse_paper_blocks
from lilo.tasks.text import count_words

__all__ = ["SIGNATURE", "matches", "respond"]

SIGNATURE = "Decide whether this benchmark question-answer pair should be kept"


def matches(prompt: str) -> bool:
    return SIGNATURE in prompt


_MIN_ANSWER_WORDS = 4
_YES_NO_OPENERS = frozenset(
    "is are was were am do does did can could will would should shall may might must has "
    "have had".split()
)


@offline_reply("qa_filter", matches=matches)
def respond(messages: list[Message], offline: OfflineSettings) -> str:
    prompt = next(m["content"] for m in messages if SIGNATURE in m["content"])
    question, answer = between(prompt, "question"), between(prompt, "answer")
    papers = " ".join(text for _, text in parse_paper_blocks(prompt))
    opener = question.split(maxsplit=1)[0].lower() if question else ""
    unseen = [n for n in numbers(answer) if n not in papers]
    if opener in _YES_NO_OPENERS:
        verdict = {"keep": False, "reason": f"yes/no question (opens with {opener!r})"}
    elif count_words(answer) < _MIN_ANSWER_WORDS:
        verdict = {"keep": False, "reason": "the answer is trivially short"}
    elif unseen:
        verdict = {"keep": False, "reason": f"figures {unseen} do not occur in the papers"}
    else:
        verdict = {"keep": True, "reason": "specific, open question answered by the papers"}
    return json.dumps(verdict)
