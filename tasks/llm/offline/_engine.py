"""The offline engine as a backend: its replies computed in worker processes, or in the
calling thread when `llm.offline.processes` is 0."""

from __future__ import annotations

from tasks.config import Settings
from tasks.llm.offline._process import complete as complete_in_workers
from tasks.llm.offline._reply import reply
from tasks.llm.types import Completion, Message

__all__ = ["ENGINE_VERSION", "OfflineEngine"]

ENGINE_VERSION = "2"


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
            return complete_in_workers(self.settings, self._settings_json, messages)
        return reply(messages, self.settings)
