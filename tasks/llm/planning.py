"""A client that plans calls without making one (`lilo run --dry-run`, docs/operations.md).

`PlanningClient` builds each request and its cache key exactly as `LLMClient` does. A key
the cache holds is served from it (free, its tokens as the endpoint counted them); any other
request is not sent: it is kept as a `PlannedCall` (one the plan sent already counts as
cached, as the run's own repeat is served from the cache) (its prompt's tokens, its `max_tokens`)
and answered by lilo's offline engine in its place, so that a method goes on along its
structure (its plan, its steps) without a model. After the first stand-in reply of a unit
its later prompts hold the stand-in's words: those calls are `estimated` (on the offline
backend the stand-in is the backend itself: nothing is). Nothing is
written: not the cache, not a call log, not the window's records, and the endpoint is
never asked (its window, tokenizer and chat template only as kept from earlier runs)."""

from __future__ import annotations

import json
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from lilo.tasks.config import Price
from lilo.tasks.llm.checks import cached_completion
from lilo.tasks.llm.client import LLMClient
from lilo.tasks.llm.offline import OfflineEngine
from lilo.tasks.llm.types import Completion, CompletionPrompt, EndpointFacts, Message
from lilo.tasks.llm.window import ContextWindow
from lilo.tasks.tokens import count_word_tokens

__all__ = ["PlannedCall", "PlanningClient"]


@dataclass(frozen=True)
class PlannedCall:
    """One call a run would make: its purpose, whether the cache holds it, its input tokens
        (`exact`: counted by the endpoint or lilo's engine; else the budget cap's estimate,
        tasks/llm/client.py), its output budget (`bounded` false: it sends none, the server's own
    limit holds), and `estimated`: its prompt holds stand-in
        replies (what the model writes decides it)."""

    purpose: str
    model: str
    cached: bool
    tokens_in: int
    max_out: int
    tokens_out: int
    exact: bool
    estimated: bool
    price: Price | None
    bounded: bool = True


class _QuietWindow(ContextWindow):
    """The endpoint's window as kept from earlier runs; the server is never asked."""

    def facts(self) -> EndpointFacts:
        """What the server said last (kept beside the cache), else nothing known."""
        with self._lock:
            if self._facts is None:
                self._facts = self._kept_facts() or EndpointFacts()
                self._learned = self._saved_window(self._facts.identity)
            return self._facts

    def prompt_tokens(
        self, messages: list[Message], facts: EndpointFacts | None = None
    ) -> tuple[int, bool]:
        """A count kept from the server where there is one, else the window's estimate."""
        saved = self.cache.get_bytes(self._count_key(messages), ".tokens.json")
        if saved is not None and isinstance(known := json.loads(saved), int) and known > 0:
            return known, True
        return super().prompt_tokens(messages, EndpointFacts())


class PlanningClient(LLMClient):
    """`real`'s requests and keys, looked up in its cache; no call made (module doc)."""

    def __init__(self, real: LLMClient, asked: set[str] | None = None) -> None:
        super().__init__(real.backend, real.cache, real.settings)
        # The keys this plan sends already: a run asking one again gets it from the cache.
        self.asked = set() if asked is None else asked
        self.window = _QuietWindow(real.backend, real.cache, real.settings.llm.context_window)
        self.stand_in = OfflineEngine(real.settings.llm.model, real.settings.llm.offline)
        self.planned: list[PlannedCall] = []
        self._plan_lock = threading.Lock()
        # The units (threads) that have had a stand-in reply: their later calls are estimated.
        self._guessing = threading.local()

    def own(self) -> LLMClient:
        """This client: it keeps no call records of its own to hand back (`planned` only)."""
        return self

    def start_unit(self) -> None:
        """A new unit of work begins on this thread: its first prompts are exact."""
        self._guessing.on = False

    def complete(
        self,
        messages: list[Message],
        *,
        purpose: str,
        temperature: float | None = None,
        max_tokens: int | None = None,
        attempt: int = 0,
        response_format: dict[str, Any] | None = None,
        sampler: str = "",
        prompt: str | None = None,
        stop: Sequence[str] = (),
    ) -> Completion:
        """The cached reply, else the offline engine's in its place; the call kept."""
        text, temperature, max_tokens, _, key = self._request(
            messages, temperature, max_tokens, attempt, response_format, sampler, prompt, stop
        )
        guessing = getattr(self._guessing, "on", False)
        hit = cached_completion(self.cache, key, self.settings.llm.max_reply_bytes)
        with self._plan_lock:
            again = key in self.asked
            self.asked.add(key)
        if hit is not None:
            completion = hit[0]
            self._plan(purpose, True, completion.tokens_in, max_tokens, completion, True, guessing)
            return completion
        sent = [{"role": "user", "content": text.text}] if text is not None else messages
        fitted, _ = self.window.fit(sent, max_tokens or None)
        completion = self.stand_in.complete(
            sent, temperature=temperature, max_tokens=fitted, response_format=response_format
        )
        offline = self.backend.name == "offline"
        tokens_in = completion.tokens_in if offline else self._tokens_in(sent)
        self._plan(purpose, again, tokens_in, fitted, completion, offline, guessing)
        # The offline engine's reply is the one the run gets: nothing after it is a guess.
        self._guessing.on = not offline
        return completion

    def _tokens_in(self, messages: list[Message]) -> int:
        """The budget cap's estimate of a prompt's tokens (tasks/llm/client.py)."""
        return sum(count_word_tokens(m.get("content", "")) for m in messages)

    def _plan(
        self,
        purpose: str,
        cached: bool,
        tokens_in: int,
        max_out: int | None,
        completion: Completion,
        exact: bool,
        estimated: bool,
    ) -> None:
        free = self.backend.name == "offline"  # lilo's own engine costs nothing
        price = Price(input=0.0, output=0.0) if free else self.settings.llm.prices.get(self.model)
        out = completion.tokens_out
        bound = max(max_out or 0, out)
        call = PlannedCall(
            purpose,
            self.model,
            cached,
            tokens_in,
            bound,
            out,
            exact,
            estimated,
            price,
            bool(max_out),
        )
        with self._plan_lock:
            self.planned.append(call)

    @property
    def model(self) -> str:
        return self.backend.model

    def _completion_prompt(
        self, messages: list[Message], prompt: str | None, stop: Sequence[str]
    ) -> CompletionPrompt | None:
        """As `LLMClient`'s, but `llm.api = "auto"` read from the kept facts, not asked."""
        if getattr(self.backend, "api_setting", "") == "auto":
            chat = self.window.facts().chat_template is not False
            if chat:
                return None
            return self._as_completion(messages, prompt, stop)
        return super()._completion_prompt(messages, prompt, stop)

    def _as_completion(
        self, messages: list[Message], prompt: str | None, stop: Sequence[str]
    ) -> CompletionPrompt:
        from lilo.tasks.llm.types import as_completion

        return as_completion(messages) if prompt is None else CompletionPrompt(prompt, tuple(stop))
