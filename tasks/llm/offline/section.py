"""Offline handler for the section writer of Markov-cluster, RAPID-style and LongScope-style
(docs/design.md §9, §15): the heading as given, then sentences from the passages shown that match
the heading and its guide, up to the section's word budget, none already written. A parent
section with no passages of its own opens with the lead sentences of its subsections. The
prompt asks to keep the passages' data, so sentences reporting numbers count as matching
(the "results" term every such candidate carries)."""

from __future__ import annotations

import re

from lilo.tasks.config import OfflineSettings
from lilo.tasks.llm.offline._overlap import between
from lilo.tasks.llm.offline.base import offline_reply
from lilo.tasks.llm.offline.extract import candidates, paragraphs, query_terms, select
from lilo.tasks.llm.types import Message
from lilo.tasks.text import count_words, split_sentences

SIGNATURE = "Write the section of the summary described below"

_HEADING_RE = re.compile(r"<heading>(.*?)</heading>")
_GUIDE_RE = re.compile(r"<guide>(.*?)</guide>", re.S)
_WORDS_RE = re.compile(r"<words>(\d+)</words>")


def matches(prompt: str) -> bool:
    return SIGNATURE in prompt


@offline_reply("section", matches=matches)
def respond(messages: list[Message], offline: OfflineSettings) -> str:
    prompt = "\n".join(m["content"] for m in messages)
    heading = _field(_HEADING_RE, prompt)
    guide = _field(_GUIDE_RE, prompt)
    cap = offline.max_words_per_reply
    head = [heading] if "Continue without a heading" not in prompt else []
    budget = min(int(_field(_WORDS_RE, prompt) or 0), cap) - count_words("\n".join(head))
    done = " ".join(between(prompt, tag) for tag in ("written", "depends", "children"))
    query = query_terms(f"{heading} {guide} results")
    chosen = select(candidates(prompt, offline), query, budget, cap, skip=done)
    if chosen:
        return "\n\n".join([*head, paragraphs(chosen)])
    return "\n\n".join([*head, _leads(between(prompt, "children"), budget)])


def _field(pattern: re.Pattern[str], prompt: str) -> str:
    found = pattern.findall(prompt)
    return found[-1].strip() if found else ""


def _leads(children: str, budget: int) -> str:
    """The first sentence of each paragraph of the subsections, within the budget."""
    out: list[str] = []
    for block in re.split(r"\n\s*\n", children):
        if block.lstrip().startswith("#"):
            continue
        sentences = split_sentences(block)
        if sentences and count_words(" ".join([*out, sentences[0]])) <= budget:
            out.append(sentences[0])
    return " ".join(out)
