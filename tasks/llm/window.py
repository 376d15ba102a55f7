"""An endpoint's context window, and what a prompt takes of it (docs/design.md §9).

A model's window at an endpoint is the smallest of what is known of it: what the server
says (vLLM's `GET /v1/models` max_model_len, llama-server's `GET /props` n_ctx, Ollama's
`POST /api/show` context length), the setting (`llm.context_window`, 0: unknown), and
what the server's own rejection said ("maximum context length is N tokens"), which is kept
beside the LLM cache (`*.window.json`) so that a rerun does not send every rejected request
again. A learned window is a hint: it is kept with the server's identity as the server
states it (`EndpointFacts.identity`) and not used once that changes, and once per process
a request refused only by it is sent (an answer forgets it, a refusal learns it again);
`lilo failures --forget-windows` removes every one. With a window known, a prompt is
counted by the server's tokenizer where it has one (each count cached), else estimated at
one token per `ESTIMATE_BYTES` bytes of text; a call's `max_tokens` becomes min(asked,
window - prompt - MARGIN_TOKENS), and a prompt that leaves no room is `ContextExceeded`
before anything is sent.
"""

from __future__ import annotations

import dataclasses
import json
import logging
import math
import threading
from pathlib import Path

from lilo.tasks.cache import DiskCache, cache_key
from lilo.tasks.llm.starting import ensure_started
from lilo.tasks.llm.types import Backend, ContextExceeded, ContextRejected, EndpointFacts, Message

__all__ = [
    "ESTIMATE_BYTES",
    "MARGIN_TOKENS",
    "PER_MESSAGE_TOKENS",
    "ContextWindow",
    "estimate_tokens",
    "forget_windows",
    "window_for",
]

log = logging.getLogger("lilo")

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
    request that needs the window; nothing is asked for replies found in the cache, and a
    question of planning (`fits`) is answered by what the server said last where that is
    kept (`*.facts.json`), so that a rerun plans as the first run did without asking."""

    def __init__(self, backend: Backend, cache: DiskCache, setting: int) -> None:
        self.backend, self.cache, self.setting = backend, cache, setting
        where = [backend.name, backend.fingerprint(), backend.model]
        self._learned_key = cache_key({"context_window": where})
        self._facts_key = cache_key({"endpoint_facts": where})
        self._where = where
        self._base_url = str(getattr(backend, "base_url", ""))
        self._facts: EndpointFacts | None = None
        self._said: EndpointFacts | None = None  # what the server said last, kept
        self._learned = 0
        self._lock = threading.Lock()

    @property
    def learned_path(self) -> Path:
        """Where the window learned from the server's rejection is kept."""
        return self.cache.path(self._learned_key, ".window.json")

    def facts(self) -> EndpointFacts:
        """What the server says (asked once; a server lilo starts itself is started first,
        tasks/llm/starting.py), and the window learned before from a server of the same
        identity, if any."""
        with self._lock:
            if self._facts is None:
                ensure_started(self._base_url)
                try:
                    self._facts = self.backend.facts()
                except Exception:  # a server that says nothing is one that does not say
                    self._facts = EndpointFacts()
                self._learned = self._saved_window(self._facts.identity)
                if self._facts != self._kept_facts():
                    record = json.dumps(dataclasses.asdict(self._facts)).encode()
                    self.cache.put_bytes(self._facts_key, record, ".facts.json")
            return self._facts

    def _planning_facts(self) -> EndpointFacts:
        """The facts asked in this process, else those kept from the last, else asked."""
        with self._lock:
            if self._facts is None and (kept := self._kept_facts()) is not None:
                if self._said is None:
                    self._said = kept
                    self._learned = self._saved_window(kept.identity)
                return self._said
        return self.facts()

    def _kept_facts(self) -> EndpointFacts | None:
        saved = self.cache.get_bytes(self._facts_key, ".facts.json")
        try:
            record = json.loads(saved) if saved is not None else None
            return EndpointFacts(**record) if isinstance(record, dict) else None
        except (ValueError, TypeError):  # no record lilo wrote: asked again
            return None

    def _saved_window(self, identity: str) -> int:
        """The learned window, where it was learned from a server of this identity."""
        saved = self.cache.get_bytes(self._learned_key, ".window.json")
        try:
            record = json.loads(saved) if saved is not None else None
        except ValueError:
            return 0
        if not isinstance(record, dict) or record.get("identity", "") != identity:
            return 0  # restarted, another model, a window it now states: asked again
        return _positive(record.get("window"))

    def size(self, facts: EndpointFacts | None = None, learned: bool = True) -> tuple[int, str]:
        """(window, where it comes from: server, setting or learned); (0, "") unknown."""
        said = (facts or self.facts()).window
        known = [(said, "server"), (self.setting, "setting")]
        known += [(self._learned, "learned")] if learned else []
        return min(((n, s) for n, s in known if n > 0), default=(0, ""))

    def prompt_tokens(
        self, messages: list[Message], facts: EndpointFacts | None = None
    ) -> tuple[int, bool]:
        """(the prompt's tokens, counted by the server: else estimated)."""
        key = self._count_key(messages)
        saved = self.cache.get_bytes(key, ".tokens.json")
        if saved is not None and (known := _positive(json.loads(saved))):
            return known, True
        tokenizer = (facts or self.facts()).tokenizer
        if tokenizer:  # planning by kept facts may count before anything else was asked
            ensure_started(self._base_url)
        counted = self.backend.count_tokens(messages, tokenizer) if tokenizer else None
        if counted is None:
            return estimate_tokens(messages), False
        self.cache.put_bytes(key, json.dumps(counted).encode(), ".tokens.json")
        return counted, True

    def fit(self, messages: list[Message], max_tokens: int | None) -> tuple[int | None, bool]:
        """(The budget to send: `max_tokens` cut to the room the prompt leaves, None staying
        None; whether the request tests the learned window). ContextExceeded when the prompt
        leaves none, except once per process where only the learned window refuses it: then
        it is sent with the budget the other sources leave, to see whether the server still
        refuses (`learn`) or answers (`forget`)."""
        window, source = self.size()
        if not window:
            return max_tokens, False
        prompt, counted = self.prompt_tokens(messages)

        def budget(window: int) -> int | None:
            room = window - prompt - MARGIN_TOKENS
            return max_tokens if max_tokens is None else min(max_tokens, room)

        if window - prompt - MARGIN_TOKENS >= 1:
            return budget(window), False
        if source == "learned":
            others, other_source = self.size(learned=False)
            if not others or others - prompt - MARGIN_TOKENS >= 1:
                if _first_test(self._test_key):
                    log.info("window %d (learned) tested by a %d-token prompt", window, prompt)
                    return (budget(others) if others else max_tokens), True
            else:
                window, source = others, other_source
        how = "" if counted else " (estimated)"
        why = f"context_exceeded: prompt {prompt} tokens{how}, window {window} ({source})"
        if source == "learned":
            why += (
                f": from the server's rejection, kept in {self.learned_path} "
                "(`lilo failures --forget-windows` forgets it)"
            )
        raise ContextExceeded(why)

    def fits(self, messages: list[Message], max_tokens: int | None) -> bool:
        """Whether the prompt and the whole budget fit the window (unknown: they do), by
        what the server said last where that is kept."""
        facts = self._planning_facts()
        window, _ = self.size(facts)
        if not window:
            return True
        prompt, _ = self.prompt_tokens(messages, facts)
        return prompt + (max_tokens or 0) + MARGIN_TOKENS <= window

    def learn(self, rejected: ContextRejected, messages: list[Message]) -> None:
        """The server's rejection: its window, kept for this process and the next with the
        server's identity, and the prompt's tokens where it said them. The learned window
        is then not tested again in this process."""
        identity = self.facts().identity
        _first_test(self._test_key)
        with self._lock:
            self._learned = rejected.window
            record = {"window": rejected.window, "where": self._where, "identity": identity}
            self.cache.put_bytes(self._learned_key, json.dumps(record).encode(), ".window.json")
        if rejected.prompt:
            key = self._count_key(messages)
            self.cache.put_bytes(key, json.dumps(rejected.prompt).encode(), ".tokens.json")

    def forget(self) -> None:
        """The server answered a prompt past the learned window: it is no longer so."""
        with self._lock:
            log.info("window %d (learned) forgotten: the server answered past it", self._learned)
            self._learned = 0
            self.learned_path.unlink(missing_ok=True)

    @property
    def _test_key(self) -> str:
        return f"{self.cache.root}:{self._learned_key}"

    def _count_key(self, messages: list[Message]) -> str:
        return cache_key({"prompt_tokens": self._where, "messages": messages})


# The learned windows tested (or just learned) in this process.
_TESTED: set[str] = set()


def _first_test(key: str) -> bool:
    """Whether the learned window `key` is tested now for the first time in this process."""
    with _LOCK:
        first = key not in _TESTED
        _TESTED.add(key)
        return first


def _positive(value: object) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else 0


_WINDOWS: dict[tuple[str, str, str, int], ContextWindow] = {}
_LOCK = threading.Lock()


def window_for(backend: Backend, cache: DiskCache, setting: int) -> ContextWindow:
    """The shared window of `backend`'s model at its endpoint (its address: two servers
    of the same weights say what each says), for clients of `cache`."""
    where = json.dumps([backend.name, backend.fingerprint(), backend.model], sort_keys=True)
    with _LOCK:
        key = (str(cache.root), where, str(getattr(backend, "base_url", "")), setting)
        if key not in _WINDOWS:
            _WINDOWS[key] = ContextWindow(backend, cache, setting)
        return _WINDOWS[key]


def forget_windows(cache_root: Path) -> list[Path]:
    """Removes the windows learned from servers' rejections under the LLM cache
    `cache_root` (only the `*.window.json` records lilo writes); returns their paths."""
    removed = []
    for path in sorted(cache_root.glob("??/*.window.json")):
        try:
            record = json.loads(path.read_bytes())
        except (OSError, ValueError):
            continue
        if isinstance(record, dict) and {"window", "where"} <= record.keys():
            path.unlink(missing_ok=True)
            removed.append(path)
    return removed
