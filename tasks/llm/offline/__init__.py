"""The offline engine: lilo's embedded default LLM (DESIGN §9).

Deterministic, honest heuristics that read only what the prompt shows and answer in the
same text protocol a chat model would (plan lines, paragraphs, QA JSON, judge JSON), so
the same parsers run on its output. Each prompt kind has one handler module in this
package exposing `matches(prompt) -> bool` (a phrase of lilo's own prompts, or the tags
that lilo's and a dataset's templates share, such as `<gold>`/`<predict>`) and
`respond(messages, settings) -> str`; `PRIORITY` orders them (the bare task instruction,
which Single sends, is the last resort). New handlers are discovered, nothing else
changes. It is recorded as the backbone (`offline:<model>`) in every row it produces.
"""

from __future__ import annotations

import importlib
import pkgutil
from types import ModuleType

from tasks.config import Settings
from tasks.llm.client import Completion, Message
from tasks.text import count_tokens

__all__ = ["ENGINE_VERSION", "OfflineEngine"]

ENGINE_VERSION = "2"


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
        self.handlers = _handlers()

    def fingerprint(self) -> dict[str, object]:
        return {"engine": ENGINE_VERSION, **self.settings.llm.offline.model_dump()}

    def complete(
        self, messages: list[Message], *, temperature: float, max_tokens: int
    ) -> Completion:
        prompt = "\n".join(m["content"] for m in messages)
        for handler in self.handlers:
            if handler.matches(prompt):
                text = handler.respond(messages, self.settings)
                break
        else:
            raise ValueError(
                "the offline engine does not know this prompt: add a handler in "
                "tasks/llm/offline/ whose matches() accepts it, or use an "
                "OpenAI-compatible backend"
            )
        return Completion(text=text, tokens_in=count_tokens(prompt), tokens_out=count_tokens(text))
