"""Offline handler for RAPID-style's outline and outline edit (docs/design.md §9, §15). A draft: a
title and background from the introduction's frequent words, one section per heading that
at least two papers' own structures share, a comparison and a conclusion. An edit adds a
section for each aspect (at most two) whose words no heading carries."""

from __future__ import annotations

import re
from collections import Counter

from lilo.tasks.config import OfflineSettings
from lilo.tasks.llm.offline._overlap import between
from lilo.tasks.llm.offline.base import offline_reply
from lilo.tasks.llm.offline.extract import keywords, query_terms
from lilo.tasks.llm.types import Message
from lilo.tasks.text import split_sentences

DRAFT = "Draft the outline of the summary as Markdown headings"
EDIT = "Revise the outline below given what the papers hold"

_SKIP = re.compile(r"intro|conclu|related|reference|appendix|acknowledg|abstract", re.I)
_ADDED = 2


def matches(prompt: str) -> bool:
    return DRAFT in prompt or EDIT in prompt


@offline_reply("outline", matches=matches)
def respond(messages: list[Message], offline: OfflineSettings) -> str:
    prompt = "\n".join(m["content"] for m in messages)
    return _edit(prompt) if EDIT in prompt else _draft(prompt)


def _draft(prompt: str) -> str:
    top = keywords(split_sentences(between(prompt, "intro")), 6) or ["the field"]
    counts: Counter[str] = Counter()
    for block in between(prompt, "structures").split("\n\n"):
        # Once per paper, in its order (a set's order changes with the hash seed).
        counts.update(list(dict.fromkeys(h.strip() for h in re.findall(r"^## (.+)$", block, re.M))))
    shared = [h for h, n in counts.items() if n >= 2 and not _SKIP.search(h)]
    lines = [f"# {', '.join(w.capitalize() for w in top[:3])}: a review"]
    lines.append(f"## Background on {top[0]} and {top[1] if len(top) > 1 else top[0]}")
    for heading in shared:
        lines.append(f"## {heading} across the papers")
        lines += [f"### {heading} of paper {i}" for i in (1, 2, 3)]
    lines += ["## Comparison of results", "## Conclusion and future directions"]
    return "\n".join(lines)


def _edit(prompt: str) -> str:
    outline = between(prompt, "outline").splitlines()
    covered = query_terms(" ".join(outline))
    added: list[str] = []
    for line in between(prompt, "aspects").splitlines():
        aspect = re.sub(r"^\W+|\s*\(papers.*$", "", line).strip()
        if aspect and not query_terms(aspect) & covered and len(added) < _ADDED:
            added.append(f"## {aspect[0].upper()}{aspect[1:]}")
            covered |= query_terms(aspect)
    at = max((i for i, x in enumerate(outline) if x.startswith("## ")), default=len(outline))
    return "\n".join(outline[:at] + added + outline[at:])
