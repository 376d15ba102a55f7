"""Offline handler for LongScope-style's skeletons (docs/design.md §9, §15): a local skeleton from a
group's passages (sections on the passages' most frequent content words, a subsection per
paper shown), a merge of skeletons (their sections once each, the introduction first and
the conclusion last), and a rewrite that applies the edits shown."""

from __future__ import annotations

import re

from lilo.tasks.config import OfflineSettings
from lilo.tasks.llm.offline._overlap import between
from lilo.tasks.llm.offline._tree import Heading, apply, key, read_edits, read_tree, write
from lilo.tasks.llm.offline.base import offline_reply
from lilo.tasks.llm.offline.extract import candidates, keywords
from lilo.tasks.llm.types import Message

LOCAL = "Propose a skeleton for the summary from the passages below"
MERGE = "Merge the skeletons below into one skeleton"
REFINE = "Rewrite the skeleton below with the edits that follow applied"

_TOPICS, _SECTIONS, _MAX_SECTIONS = 6, 2, 8
_ENDS = re.compile(r"conclu|future", re.I)


def matches(prompt: str) -> bool:
    return any(s in prompt for s in (LOCAL, MERGE, REFINE))


@offline_reply("skeleton", matches=matches)
def respond(messages: list[Message], offline: OfflineSettings) -> str:
    prompt = "\n".join(m["content"] for m in messages)
    if REFINE in prompt:
        nodes = read_tree(between(prompt, "skeleton"))
        return write(apply(nodes, read_edits(between(prompt, "edits"))))
    if MERGE in prompt:
        return write(_merge(between(prompt, "skeletons")))
    return write(_local(prompt, offline))


def guide(topic: str) -> str:
    return f"Extract: what the papers report on {topic}, with data | Analyse: how they differ"


def _local(prompt: str, offline: OfflineSettings) -> list[Heading]:
    pool = [c for c in candidates(prompt, offline) if c.weight > 0]
    top = keywords((c.text for c in pool), _TOPICS) or ["the papers"]
    papers = sorted({c.paper for c in pool})
    nodes = [Heading(1, f"{top[0].capitalize()}: a review")]
    nodes.append(Heading(2, "Introduction", guide("the field, its history and challenges")))
    for n in range(_SECTIONS):
        pair = top[2 * n : 2 * n + 2]
        if not pair:
            break
        topic = " and ".join(pair)
        nodes.append(Heading(2, topic[0].upper() + topic[1:], guide(topic)))
        nodes += [
            Heading(3, f"{pair[0].capitalize()} in paper {p}", guide(pair[0])) for p in papers
        ]
    nodes.append(
        Heading(2, "Conclusion and future directions", guide("limitations and open problems"))
    )
    return nodes


def _merge(text: str) -> list[Heading]:
    """Top-level sections in first-seen order with their subsections, once each."""
    sections: dict[str, list[Heading]] = {}
    title = None
    for node in read_tree(text):
        if node.level == 1:
            title = title or node
        elif node.level == 2:
            sections.setdefault(key(node.heading), [node])
            current = key(node.heading)
        elif sections:
            block = sections[current]
            if key(node.heading) not in {key(n.heading) for n in block}:
                block.append(node)
    keys = list(sections)
    ends = [k for k in keys if _ENDS.search(k)]
    middle = [k for k in keys if k not in ends][: _MAX_SECTIONS - len(ends[:1])]
    out = [title] if title else []
    for k in middle + ends[:1]:
        out += sections[k]
    return out
