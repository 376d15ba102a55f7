"""The offline engine: lilo's embedded default LLM (DESIGN §9).

Deterministic, honest heuristics that read only what the prompt shows and answer in the
same text protocol a chat model would (plan lines, paragraphs, QA JSON, judge JSON), so
the same parsers run on its output. Each prompt kind has one handler module in this
package exposing `matches(prompt) -> bool` (a phrase of lilo's own prompts, or the tags
that lilo's and a dataset's templates share, such as `<gold>`/`<predict>`) and
`respond(messages, settings) -> str`; `PRIORITY` orders them (the bare task instruction,
which Single sends, is the last resort). New handlers are discovered, nothing else
changes. It is recorded as the backbone (`offline:<model>`) in every row it produces.

Replies are computed in `llm.offline.processes` worker processes (`_process.py`), as a
real endpoint runs apart from its client: in lilo's process the engine would hold the
interpreter lock that the methods, the embedder and the writes need.
"""

from __future__ import annotations

import functools
import importlib
import pkgutil
from types import ModuleType

from tasks.config import Settings
from tasks.llm.offline import _process
from tasks.llm.types import Completion, Message
from tasks.text import count_tokens

__all__ = ["ENGINE_VERSION", "OfflineEngine"]

ENGINE_VERSION = "2"


@functools.cache
def _handlers() -> list[ModuleType]:
    modules = []
    for info in sorted(pkgutil.iter_modules(__path__), key=lambda m: m.name):
        if not info.name.startswith("_"):
            modules.append(importlib.import_module(f"{__name__}.{info.name}"))
    handlers = [m for m in modules if hasattr(m, "matches") and hasattr(m, "respond")]
    return sorted(handlers, key=lambda m: getattr(m, "PRIORITY", 0))


class OfflineEngine:
    name = "offline"

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self.model = settings.llm.model
        self._settings_json = settings.model_dump_json() if settings.llm.offline.processes else ""

    def fingerprint(self) -> dict[str, object]:
        # Where replies are computed changes none of them.
        return {
            "engine": ENGINE_VERSION,
            **self.settings.llm.offline.model_dump(exclude={"processes"}),
        }

    def complete(
        self, messages: list[Message], *, temperature: float, max_tokens: int
    ) -> Completion:
        if self._settings_json:
            return _process.complete(self.settings, self._settings_json, messages)
        return reply(messages, self.settings)


def reply(messages: list[Message], settings: Settings) -> Completion:
    """The engine's reply to `messages`, computed in this thread."""
    prompt = "\n".join(m["content"] for m in messages)
    for handler in _handlers():
        if handler.matches(prompt):
            text = handler.respond(messages, settings)
            break
    else:
        raise ValueError(
            "the offline engine does not know this prompt: add a handler in "
            "tasks/llm/offline/ whose matches() accepts it, or use an "
            "OpenAI-compatible backend"
        )
    return Completion(text=text, tokens_in=count_tokens(prompt), tokens_out=count_tokens(text))
