"""Offline handler: the QA judge (docs/design.md §8, §9 "judgments by overlap mapped to the score
tiers"): the share of the gold answer's key tokens found in the predicted answer, and no credit
when a number of the gold answer is not in the prediction. Both lilo's template and the
benchmark's show them in `<gold>` and `<predict>`."""

from __future__ import annotations

import json
import re
from decimal import Decimal, InvalidOperation

from lilo.tasks.config import OfflineSettings
from lilo.tasks.llm.offline._overlap import between, overlap, tier
from lilo.tasks.llm.offline.base import offline_reply
from lilo.tasks.llm.types import Message

__all__ = ["matches", "number_values", "respond"]

_SHOW_MISSING = 8
# A number as written in an answer: "0.5", ".50", "1,200", "-3", "12%", "12 %".
_VALUE_RE = re.compile(r"(?<![\w.])(-?)(\d{1,3}(?:,\d{3})+|\d*\.\d+|\d+)(?:\.(?!\d))?(\s?%)?")


def matches(prompt: str) -> bool:
    return "<gold>" in prompt and "<predict>" in prompt


def number_values(text: str) -> set[str]:
    """The numbers of `text`, normalised: thousands commas and trailing zeros dropped, a
    percent sign kept ("0.5" and ".50" are "0.5"; "12%" and "12 %" are "12%")."""
    found = set()
    for sign, digits, percent in _VALUE_RE.findall(text):
        try:
            value = Decimal(sign + digits.replace(",", "")).normalize()
        except InvalidOperation:
            continue
        found.add(f"{value:f}" + ("%" if percent else ""))
    return found


@offline_reply("evaluate", matches=matches, priority=1)
def respond(messages: list[Message], offline: OfflineSettings) -> str:
    """The grade: the overlap tier, or 0 when a gold number is missing from the prediction."""
    prompt = "\n".join(m["content"] for m in messages)
    gold, predict = between(prompt, "gold"), between(prompt, "predict")
    ratio, missing = overlap(gold, predict)
    wrong = sorted(number_values(gold) - number_values(predict))
    if wrong:
        reason = f"the gold answer's number {', '.join(wrong[:_SHOW_MISSING])} is not in the answer"
        return json.dumps({"reason": reason, "score": 0.0})
    reason = f"{ratio:.0%} of the gold answer's key points (numbers, terms, content words) found"
    if missing:
        reason += f"; missing: {', '.join(sorted(missing)[:_SHOW_MISSING])}"
    return json.dumps({"reason": reason, "score": tier(ratio)})
