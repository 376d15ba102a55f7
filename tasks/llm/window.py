"""An endpoint's context window, and what a prompt takes of it (docs/design.md §9).

A model's window at an endpoint is the smallest of what is known of it: what the server
says (vLLM's `GET /v1/models` max_model_len, llama-server's `GET /props` n_ctx, Ollama's
`POST /api/show` context length), the setting (`llm.context_window`, 0: unknown), and
what the server's own rejection said ("maximum context length is N tokens"), which is kept
beside the LLM cache so that a rerun does not send the rejected request again. With a
window known, a prompt is counted by the server's tokenizer where it has one (each count
cached), else estimated at one token per `ESTIMATE_BYTES` bytes of text; a call's
`max_tokens` becomes min(asked, window - prompt - MARGIN_TOKENS), and a prompt that
leaves no room is `ContextExceeded` before anything is sent.
"""

from __future__ import annotations

import json
import math
import threading

from lilo.tasks.cache import DiskCache, cache_key
from lilo.tasks.llm.types import Backend, ContextExceeded, ContextRejected, EndpointFacts, Message

__all__ = [
    "ESTIMATE_BYTES",
    "MARGIN_TOKENS",
    "PER_MESSAGE_TOKENS",
    "ContextWindow",
    "estimate_tokens",
    "window_for",
]

# Tokens kept free beside prompt and reply: the chat template's closing and the reply's
# first token, which no tokenizer count of the messages' text includes.
MARGIN_TOKENS = 16
# The chat template's tokens around each message (role markers, turn ends), added to a
# count of the messages' text: 5 to 7 for the ChatML, Llama 3 and Gemma templates.
PER_MESSAGE_TOKENS = 8
# Where no tokenizer is offered (Ollama, OpenAI): one token per 3 bytes of UTF-8 text, an
# overestimate for English prose and LaTeX with the tokenizers of current models (about 4
# bytes a token; tests/test_context_window.py measures the corpus with o200k_base).
ESTIMATE_BYTES = 3


def estimate_tokens(messages: list[Message]) -> int:
    """The prompt's tokens where no tokenizer is offered: `ESTIMATE_BYTES` bytes a token,
    plus the template's tokens per message."""
    size = sum(len(m.get("content", "").encode()) for m in messages)
    return math.ceil(size / ESTIMATE_BYTES) + PER_MESSAGE_TOKENS * len(messages)


class ContextWindow:
    """The window of one model at one endpoint, shared by the clients of this process
    (the generator and a judge on the same server). The server is asked once, at the first
    request that needs the window; nothing is asked for replies found in the cache."""

    def __init__(self, backend: Backend, cache: DiskCache, setting: int) -> None:
        self.backend, self.cache, self.setting = backend, cache, setting
        where = [backend.name, backend.fingerprint(), backend.model]
        self._learned_key = cache_key({"context_window": where})
        self._where = where
        self._facts: EndpointFacts | None = None
        self._learned = 0
        self._lock = threading.Lock()

    def facts(self) -> EndpointFacts:
        """What the server says (asked once), and the window learned before, if any."""
        with self._lock:
            if self._facts is None:
                try:
                    self._facts = self.backend.facts()
                except Exception:  # a server that says nothing is one that does not say
                    self._facts = EndpointFacts()
                saved = self.cache.get_bytes(self._learned_key, ".window.json")
                if saved is not None:
                    self._learned = _positive(json.loads(saved).get("window"))
            return self._facts

    def size(self) -> tuple[int, str]:
        """(window, where it comes from: server, setting or learned); (0, "") unknown."""
        said = self.facts().window
        known = [(said, "server"), (self.setting, "setting"), (self._learned, "learned")]
        return min(((n, s) for n, s in known if n > 0), default=(0, ""))

    def prompt_tokens(self, messages: list[Message]) -> tuple[int, bool]:
        """(the prompt's tokens, counted by the server: else estimated)."""
        tokenizer = self.facts().tokenizer
        key = self._count_key(messages)
        saved = self.cache.get_bytes(key, ".tokens.json")
        if saved is not None and (known := _positive(json.loads(saved))):
            return known, True
        counted = self.backend.count_tokens(messages, tokenizer) if tokenizer else None
        if counted is None:
            return estimate_tokens(messages), False
        self.cache.put_bytes(key, json.dumps(counted).encode(), ".tokens.json")
        return counted, True

    def fit(self, messages: list[Message], max_tokens: int | None) -> int | None:
        """The budget to send: `max_tokens` cut to the room the prompt leaves (None, no
        limit, stays None). ContextExceeded when the prompt leaves none."""
        window, source = self.size()
        if not window:
            return max_tokens
        prompt, counted = self.prompt_tokens(messages)
        room = window - prompt - MARGIN_TOKENS
        if room < 1:
            how = "" if counted else " (estimated)"
            raise ContextExceeded(
                f"context_exceeded: prompt {prompt} tokens{how}, window {window} ({source})"
            )
        return max_tokens if max_tokens is None else min(max_tokens, room)

    def fits(self, messages: list[Message], max_tokens: int | None) -> bool:
        """Whether the prompt and the whole budget fit the window (unknown: they do)."""
        window, _ = self.size()
        if not window:
            return True
        prompt, _ = self.prompt_tokens(messages)
        return prompt + (max_tokens or 0) + MARGIN_TOKENS <= window

    def learn(self, rejected: ContextRejected, messages: list[Message]) -> None:
        """The server's rejection: its window, kept for this process and the next, and the
        prompt's tokens where it said them."""
        with self._lock:
            if not self._learned or rejected.window < self._learned:
                self._learned = rejected.window
                record = {"window": rejected.window, "where": self._where}
                self.cache.put_bytes(self._learned_key, json.dumps(record).encode(), ".window.json")
        if rejected.prompt:
            key = self._count_key(messages)
            self.cache.put_bytes(key, json.dumps(rejected.prompt).encode(), ".tokens.json")

    def _count_key(self, messages: list[Message]) -> str:
        return cache_key({"prompt_tokens": self._where, "messages": messages})


def _positive(value: object) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else 0


_WINDOWS: dict[tuple[str, str, int], ContextWindow] = {}
_LOCK = threading.Lock()


def window_for(backend: Backend, cache: DiskCache, setting: int) -> ContextWindow:
    """The shared window of `backend`'s model at its endpoint, for clients of `cache`."""
    where = json.dumps([backend.name, backend.fingerprint(), backend.model], sort_keys=True)
    with _LOCK:
        key = (str(cache.root), where, setting)
        if key not in _WINDOWS:
            _WINDOWS[key] = ContextWindow(backend, cache, setting)
        return _WINDOWS[key]
