"""Offline handler: key-value retrieval (docs/design.md §17). The prompt shows a JSON
object, one `"key": "value"` pair a line, and asks for the value of the key named on the
last `Key:` line (lilo's template and the authors' alike). The engine returns the value
only when it reads the line that holds the key: with middle neglect on, a line in the
middle of a long prompt is read less often (the reader of every other prompt)."""

from __future__ import annotations

import re

from lilo.tasks.config import OfflineSettings
from lilo.tasks.llm.client import Message
from lilo.tasks.llm.offline._probe_reader import probe_reader
from lilo.tasks.llm.offline.base import offline_reply

__all__ = ["NOT_FOUND", "matches", "respond"]

NOT_FOUND = "The key is not in what I read."
_RECORD = re.compile(r'^[{ ]"([^"\n]+)": "([^"\n]*)"[,}]$', re.M)
_KEY = re.compile(r'^Key: "([^"\n]+)"\s*$', re.M)


def matches(prompt: str) -> bool:
    return bool(_KEY.search(prompt)) and len(_RECORD.findall(prompt)) >= 2


# After every handler of lilo's own prompts (their signatures come first), before the bare
# task instruction.
@offline_reply("probe_kv", matches=matches, priority=5)
def respond(messages: list[Message], offline: OfflineSettings) -> str:
    prompt = "\n".join(m["content"] for m in messages)
    key = _KEY.findall(prompt)[-1]
    read = probe_reader(prompt, offline)
    size = max(len(prompt), 1)
    for record in _RECORD.finditer(prompt):
        if record.group(1) == key and read(record.start() / size, record.group(0)):
            return record.group(2)
    return NOT_FOUND
