"""Offline handler for RAPID-style's dependency plan (docs/design.md §9, §15): a section that draws
things together (comparison, results, discussion, conclusion) depends on every section that
does not, and on the earlier ones that do; the others depend on none."""

from __future__ import annotations

import re

from lilo.tasks.config import OfflineSettings
from lilo.tasks.llm.offline._overlap import between
from lilo.tasks.llm.offline.base import offline_reply
from lilo.tasks.llm.types import Message

SIGNATURE = "say which sections must be written before it"

_SYNTHESIS = re.compile(r"compar|result|discuss|conclu|future|summary|common", re.I)
_LINE_RE = re.compile(r"^\s*(\d+)\.\s*(.*)$")


def matches(prompt: str) -> bool:
    return SIGNATURE in prompt


@offline_reply("dependencies", matches=matches)
def respond(messages: list[Message], offline: OfflineSettings) -> str:
    prompt = "\n".join(m["content"] for m in messages)
    found = [_LINE_RE.match(x) for x in between(prompt, "sections").splitlines()]
    sections = [(int(m.group(1)), bool(_SYNTHESIS.search(m.group(2)))) for m in found if m]
    lines = []
    for n, joins in sections:
        needs = [d for d, j in sections if joins and d != n and (not j or d < n)]
        lines.append(f"{n}: {', '.join(map(str, needs)) or 'None'}")
    return "\n".join(lines)
