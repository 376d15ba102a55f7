"""The offline engine as a backend: its replies computed in worker processes, or in the
calling thread when `llm.offline.processes` is 0."""

from __future__ import annotations

import itertools
import json
from collections.abc import Callable
from typing import Any

from lilo.tasks.config import OfflineSettings
from lilo.tasks.llm.offline._process import complete as complete_in_workers
from lilo.tasks.llm.offline._reply import reply
from lilo.tasks.llm.types import API, Completion, CompletionPrompt, EndpointFacts, Message
from lilo.tasks.tokens import WORD_TOKEN_RE, count_word_tokens

__all__ = ["ENGINE_VERSION", "OfflineEngine"]

ENGINE_VERSION = "4"


class OfflineEngine:
    name = "offline"

    def __init__(self, model: str, offline: OfflineSettings) -> None:
        self.model, self.offline = model, offline
        self._offline_json = offline.model_dump_json() if offline.processes else ""

    def fingerprint(self) -> dict[str, object]:
        # Where replies are computed changes none of them.
        return {
            "engine": ENGINE_VERSION,
            **self.offline.model_dump(exclude={"processes"}),
        }

    def api(self) -> API:
        """The engine reads messages whatever `llm.api` says."""
        return "chat"

    def facts(self) -> EndpointFacts:
        """The engine reads prompts of any length."""
        return EndpointFacts()

    def count_tokens(self, messages: list[Message], tokenizer: str) -> int | None:
        return None

    def complete(
        self,
        messages: list[Message],
        *,
        temperature: float,
        max_tokens: int | None,
        response_format: dict[str, Any] | None = None,
        sending: Callable[[], None] | None = None,
        prompt: CompletionPrompt | None = None,
    ) -> Completion:
        """The reply, structured as asked and cut at `max_tokens` word tokens as an
        endpoint cuts it (`finish_reason` "length"); a `prompt` read as one user message."""
        if sending is not None:
            sending()
        if prompt is not None:
            messages = [{"role": "user", "content": prompt.text}]
        if self._offline_json:
            completion = complete_in_workers(self.offline, self._offline_json, messages)
        else:
            completion = reply(messages, self.offline)
        return cut(conform(completion, response_format), max_tokens)


def conform(completion: Completion, response_format: dict[str, Any] | None) -> Completion:
    """The reply as a structured-output endpoint gives it: asked for a JSON schema, only
    the schema's properties of the handler's JSON object (a QA grade asked for
    `{"score": number}` answers `{"score": 0.5}`)."""
    if response_format is None or response_format.get("type") != "json_schema":
        return completion
    schema = response_format["json_schema"]["schema"]
    value = json.loads(completion.text)
    kept = {k: value[k] for k in schema.get("properties", {}) if k in value}
    text = json.dumps(kept)
    return Completion(text, completion.tokens_in, count_word_tokens(text))


def cut(completion: Completion, max_tokens: int | None) -> Completion:
    """The reply's first `max_tokens` word tokens, marked "length", where it is longer."""
    if max_tokens is None or completion.tokens_out <= max_tokens:
        return completion
    last = next(itertools.islice(WORD_TOKEN_RE.finditer(completion.text), max_tokens - 1, None))
    return Completion(completion.text[: last.end()], completion.tokens_in, max_tokens, "length")
