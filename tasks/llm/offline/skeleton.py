"""Offline handler for LongScope-style's skeletons (DESIGN §9, §15): a local skeleton from a
group's passages (sections on the passages' most frequent content words, a subsection per
paper shown), a merge of skeletons (their sections once each, the introduction first and
the conclusion last), and a rewrite that applies the edits shown."""

from __future__ import annotations

import re

from tasks.config import Settings
from tasks.llm.offline._extract import candidates, keywords
from tasks.llm.offline._overlap import between
from tasks.llm.types import Message
from tasks.methods._skeleton import (
    Node,
    apply_edit,
    heading_key,
    parse_edit,
    parse_skeleton,
    render,
)

LOCAL = "Propose a skeleton for the summary from the passages below"
MERGE = "Merge the skeletons below into one skeleton"
REFINE = "Rewrite the skeleton below with the edits that follow applied"

_TOPICS, _SECTIONS, _MAX_SECTIONS = 6, 2, 8
_ENDS = re.compile(r"conclu|future", re.I)


def matches(prompt: str) -> bool:
    return any(s in prompt for s in (LOCAL, MERGE, REFINE))


def respond(messages: list[Message], settings: Settings) -> str:
    prompt = "\n".join(m["content"] for m in messages)
    if REFINE in prompt:
        nodes = parse_skeleton(between(prompt, "skeleton"))
        return render(apply_edit(nodes, parse_edit(between(prompt, "edits"))))
    if MERGE in prompt:
        return render(_merge(between(prompt, "skeletons")))
    return render(_local(prompt, settings))


def guide(topic: str) -> str:
    return f"Extract: what the papers report on {topic}, with data | Analyse: how they differ"


def _local(prompt: str, settings: Settings) -> list[Node]:
    pool = [c for c in candidates(prompt, settings.llm.offline) if c.weight > 0]
    top = keywords((c.text for c in pool), _TOPICS) or ["the papers"]
    papers = sorted({c.paper for c in pool})
    nodes = [Node(1, f"{top[0].capitalize()}: a review")]
    nodes.append(Node(2, "Introduction", guide("the field, its history and challenges")))
    for n in range(_SECTIONS):
        pair = top[2 * n : 2 * n + 2]
        if not pair:
            break
        topic = " and ".join(pair)
        nodes.append(Node(2, topic[0].upper() + topic[1:], guide(topic)))
        nodes += [Node(3, f"{pair[0].capitalize()} in paper {p}", guide(pair[0])) for p in papers]
    nodes.append(
        Node(2, "Conclusion and future directions", guide("limitations and open problems"))
    )
    return nodes


def _merge(text: str) -> list[Node]:
    """Top-level sections in first-seen order with their subsections, once each."""
    sections: dict[str, list[Node]] = {}
    title = None
    for node in parse_skeleton(text):
        if node.level == 1:
            title = title or node
        elif node.level == 2:
            sections.setdefault(heading_key(node.heading), [node])
            current = heading_key(node.heading)
        elif sections:
            block = sections[current]
            if heading_key(node.heading) not in {heading_key(n.heading) for n in block}:
                block.append(node)
    keys = list(sections)
    ends = [k for k in keys if _ENDS.search(k)]
    middle = [k for k in keys if k not in ends][: _MAX_SECTIONS - len(ends[:1])]
    out = [title] if title else []
    for k in middle + ends[:1]:
        out += sections[k]
    return out
