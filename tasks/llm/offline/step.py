"""Offline handler for AgentWrite's writer step (docs/design.md §7, §9): one paragraph for the
current step (in `<step>`, whatever the plan's format), from sentences that match it and
are not yet in the text written so far; sentences RAL-Writer restated near the end are
preferred, as a model attending to the end of its prompt would."""

from __future__ import annotations

import re

from lilo.tasks.config import OfflineSettings
from lilo.tasks.llm.offline._overlap import between
from lilo.tasks.llm.offline.base import offline_reply
from lilo.tasks.llm.offline.extract import (
    candidates,
    comparison_table,
    focus_papers,
    paragraphs,
    query_terms,
    select,
    target_words,
    title,
)
from lilo.tasks.llm.types import Message
from lilo.tasks.paper_tags import parse_paper_blocks
from lilo.tasks.text import count_words

SIGNATURE = "Now write only the next paragraph, for this step of the plan:"

_WORDS_RE = re.compile(r"(\d[\d,]*)\s*words?\b|word\s*count\D{0,12}(\d[\d,]*)", re.I)
# A heading is the step up to its first colon or semicolon, and at most this long.
_HEADING_WORDS = 12
_LABEL_RE = re.compile(r"^\W*(?:paragraph|step|section|part)?\s*\d*\W*(?:main\s*point\W*)?", re.I)


def matches(prompt: str) -> bool:
    """lilo's writer, or a benchmark's own: the plan in `<steps>`, the current `<step>`."""
    return SIGNATURE in prompt or ("<steps>" in prompt and "<step>" in prompt)


@offline_reply("step", matches=matches)
def respond(messages: list[Message], offline: OfflineSettings) -> str:
    prompt = "\n".join(m["content"] for m in messages)
    step = between(prompt, "step")
    steps = [line.strip() for line in between(prompt, "steps").splitlines() if line.strip()]
    number = steps.index(step) + 1 if step in steps else 1
    asked = _words(step) or target_words(prompt) // max(len(steps), 1)
    point = _WORDS_RE.sub("", _LABEL_RE.sub("", step, count=1))
    written = between(prompt, "written")
    papers = parse_paper_blocks(prompt)
    cap = offline.max_words_per_reply
    heading = " ".join(re.split(r"[:;]|\s-\s", point, maxsplit=1)[0].split()[:_HEADING_WORDS])
    head = [title(papers)] if number == 1 else []
    head.append(f"## {heading}")
    if "table" in point.lower():
        head.append(comparison_table(papers))
    fixed = count_words("\n".join(head))
    chosen = select(
        candidates(prompt, offline),
        query_terms(point),
        min(asked, cap) - fixed,
        cap - fixed,
        focus=focus_papers(point),
        skip=written,
    )
    return "\n\n".join([*head, paragraphs(chosen)])


def _words(step: str) -> int:
    match = _WORDS_RE.search(step)
    return int((match.group(1) or match.group(2)).replace(",", "")) if match else 0
