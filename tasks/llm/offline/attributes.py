"""Offline handler for RAPID-style's attributes (docs/design.md §9, §15): one atomic aspect per
outline heading (its words, without numbering), then the results and the datasets, at most
as many as the prompt asks for."""

from __future__ import annotations

import re

from lilo.tasks.config import OfflineSettings
from lilo.tasks.llm.offline._overlap import between
from lilo.tasks.llm.offline.base import offline_reply
from lilo.tasks.llm.types import Message

SIGNATURE = "List the atomic aspects the summary must cover"

_N_RE = re.compile(r"List at most (\d+)")


def matches(prompt: str) -> bool:
    return SIGNATURE in prompt


@offline_reply("attributes", matches=matches)
def respond(messages: list[Message], offline: OfflineSettings) -> str:
    prompt = "\n".join(m["content"] for m in messages)
    match = _N_RE.search(prompt)
    n = int(match.group(1)) if match else 12
    aspects = [
        re.sub(r"\s+across the papers$|\s+of paper \d+$", "", line.lstrip("#").strip())
        for line in between(prompt, "outline").splitlines()
        if line.startswith("## ")
    ]
    aspects += ["the datasets and evaluation metrics used", "the reported results"]
    unique = list(dict.fromkeys(a for a in aspects if a))
    return "\n".join(f"- {a}" for a in unique[:n])
