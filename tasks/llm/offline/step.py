"""Offline handler for AgentWrite's writer step (DESIGN §7, §9): one paragraph for the
current step, from sentences that match its main point and are not yet in the text written
so far; sentences RAL-Writer restated at the tail are preferred, as a model attending to the
end of its prompt would."""

from __future__ import annotations

import re

from tasks.config import Settings
from tasks.llm.client import Message
from tasks.llm.offline._extract import (
    candidates,
    comparison_table,
    focus_papers,
    paragraphs,
    query_terms,
    select,
    title,
)
from tasks.prompting import parse_paper_blocks
from tasks.text import count_words

SIGNATURE = "Now write only the next paragraph, for this step of the plan:"

_STEP_RE = re.compile(r"Paragraph (\d+) - Main Point: (.+?) - Word Count: (\d+)")
_WRITTEN_RE = re.compile(r"<written>\n(.*?)\n</written>", re.S)
# A heading is the main point up to its first colon or semicolon, and at most this long.
_HEADING_WORDS = 12


def respond(messages: list[Message], settings: Settings) -> str:
    prompt = "\n".join(m["content"] for m in messages)
    after = prompt.split(SIGNATURE, 1)[1].strip().split("\n", 1)[0]
    step = _STEP_RE.search(after)
    if step is None:
        raise ValueError(f"offline writer: cannot read the current step from {after!r}")
    number, point, asked = int(step.group(1)), step.group(2), int(step.group(3))
    written_match = _WRITTEN_RE.search(prompt)
    written = written_match.group(1) if written_match else ""
    papers = parse_paper_blocks(prompt)
    offline = settings.llm.offline
    cap = offline.max_words_per_reply
    heading = " ".join(re.split(r"[:;]", point, maxsplit=1)[0].split()[:_HEADING_WORDS])
    head = [title(papers)] if number == 1 else []
    head.append(f"## {heading}")
    if "table" in point.lower():
        head.append(comparison_table(papers))
    fixed = count_words("\n".join(head))
    chosen = select(
        candidates(prompt, offline.middle_neglect),
        query_terms(point),
        min(asked, cap) - fixed,
        cap - fixed,
        focus=focus_papers(point),
        skip=written,
    )
    return "\n\n".join([*head, paragraphs(chosen)])
