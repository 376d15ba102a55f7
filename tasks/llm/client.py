"""LLMClient: the one way lilo talks to a language model.

Every call goes through the content-addressed cache, single flight (identical requests in
flight at once share one call, also across the processes sharing the cache), the
concurrency and rate limits of its endpoint and model (tasks/llm/limits.py) and the
backend's retries; each call (hit or miss) is kept as an `LLMCall` record, appended to the
run's call log when the client has one (the flow folds it into the warehouse) and kept for
the task to return. A backend is anything with `name`, `model`, `fingerprint()`,
`facts()`, `count_tokens()` and `complete()` (tasks/llm/types.py).

Before a request is sent its budget is fitted to the endpoint's context window
(tasks/llm/window.py): `max_tokens` cut to what the prompt leaves, or the failure
`context_exceeded` without a call. The cache key holds the budget asked for; the entry and
the call record what was sent and why the reply ended (`finish_reason`).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Sequence
from concurrent.futures import Future
from contextlib import nullcontext
from dataclasses import replace
from typing import Any

from lilo.tasks.cache import DiskCache, cache_key, canonical_json
from lilo.tasks.config import ChatEndpointSettings, Price, Settings
from lilo.tasks.errors import with_cause
from lilo.tasks.lifetime import raise_if_stopping
from lilo.tasks.live import LIVE
from lilo.tasks.llm.batch import (
    BATCH_FAILED,
    BATCH_LANDED,
    PLACEHOLDER,
    BatchFailed,
    Collector,
    Pending,
)
from lilo.tasks.llm.budget import budget_for
from lilo.tasks.llm.checks import cached_completion
from lilo.tasks.llm.ledger import CallLog
from lilo.tasks.llm.limits import Limits, limits_for
from lilo.tasks.llm.shared import shared_limits_for
from lilo.tasks.llm.types import (
    Backend,
    Completion,
    CompletionPrompt,
    ContextExceeded,
    ContextRejected,
    LLMError,
    Message,
    ResponseFormatUnsupported,
    as_completion,
)
from lilo.tasks.llm.window import window_for
from lilo.tasks.records import LLMCall
from lilo.tasks.redact import configured_secrets, redact, redact_reply
from lilo.tasks.tokens import count_word_tokens

__all__ = ["LLMClient", "judge_settings", "make_client", "make_judge_client"]

_IN_FLIGHT: dict[str, Future[tuple[Completion, float]]] = {}
_LOCK = threading.Lock()


class LLMClient:
    def __init__(
        self,
        backend: Backend,
        cache: DiskCache,
        settings: Settings,
        log: CallLog | None = None,
    ) -> None:
        self.backend = backend
        self.cache = cache
        self.settings = settings
        self.log = log
        self.calls: list[LLMCall] = []
        # Set: a round that collects the requests the cache lacks for a batch (`_collect`).
        self.collector: Collector | None = None
        self._lock = threading.Lock()
        cfg = settings.llm
        where = f"{backend.name}:{getattr(backend, 'base_url', '')}"
        limits = Limits(cfg.concurrency, cfg.rpm, cfg.tpm)
        self._endpoint = limits_for(where, backend.model, limits)
        # The endpoint-wide limits the flows provide (tasks/llm/shared.py): a Prefect server's.
        self._shared = shared_limits_for(where, backend.model, limits, cfg.shared_limits)
        self.window = window_for(backend, cache, cfg.context_window)

    @property
    def concurrency(self) -> int:
        """The calls a caller sends at once on this client: its endpoint's `concurrency`."""
        return self.settings.llm.concurrency

    @property
    def backbone(self) -> str:
        """The label recorded with every result this client produced."""
        return f"{self.backend.name}:{self.backend.model}"

    def chat(self, messages: list[Message], **ask: Any) -> str:
        """The reply's text (see `complete`)."""
        return self.complete(messages, **ask).text

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
        """The reply to `messages`, with its tokens and why it ended (`truncated`: cut at
        its budget). `max_tokens` None: `llm.max_tokens`; 0: none sent (the server's own
        limit). `attempt` > 0 asks the same prompt again for a fresh sample (a re-asked
        plan): it is part of the cache key, so a rerun replays each attempt from the cache
        instead of getting the first reply every time. `response_format` (OpenAI's, e.g. a
        JSON schema) is sent and is part of the key. `sampler` names who samples (a method
        variant): two methods sending one prompt get a reply each, each replayed on a rerun;
        it is in the key (as `draw`, the name every cached reply was stored under), never
        sent. Where the backend sends completions (`llm.api`), `prompt` and `stop` are
        sent in place of the messages: a caller's own completion form, else the messages
        as one text (`as_completion`); the key holds what is sent."""
        text, temperature, max_tokens, blob, key = self._request(
            messages, temperature, max_tokens, attempt, response_format, sampler, prompt, stop
        )
        hit = cached_completion(self.cache, key, self.settings.llm.max_reply_bytes)
        if hit is not None:
            completion, latency = hit
            if self.collector is None:  # a collecting round records nothing
                if key in BATCH_LANDED:  # made by this process's batch: in the ledger as such
                    BATCH_LANDED.discard(key)
                else:
                    self._record(key, purpose, blob, completion, latency, cached=True)
            return completion
        if self.collector is not None:
            return self._collect(
                key,
                blob,
                purpose,
                messages,
                temperature,
                max_tokens,
                ask=(attempt, response_format, text),
            )
        if key in BATCH_FAILED:  # the batch sent for it did not answer it
            raise BatchFailed(f"{self.backbone} failed for {purpose}: {BATCH_FAILED[key]}")
        flight = f"{self.cache.root}:{key}"
        with _LOCK:
            shared = _IN_FLIGHT.get(flight)
            if shared is None:
                mine: Future[tuple[Completion, float]] = Future()
                _IN_FLIGHT[flight] = mine
        if shared is not None:  # the same request is in flight: share its reply
            completion, latency = shared.result()
            self._record(key, purpose, blob, completion, latency, cached=True)
            return completion
        try:
            # Looked at again once this call owns the key in this process and in every
            # process sharing the cache: an identical call that ended in between (here, or
            # in another Dask worker) wrote the cache before letting go.
            with self.cache.claim(key):
                hit = cached_completion(self.cache, key, self.settings.llm.max_reply_bytes)
                if hit is not None:
                    completion, latency = hit
                else:
                    completion, latency, sent = self._call(
                        key,
                        messages,
                        purpose,
                        temperature,
                        max_tokens or None,
                        response_format,
                        text,
                    )
                    self.cache.put_json(
                        key,
                        {
                            "text": completion.text,
                            "tokens_in": completion.tokens_in,
                            "tokens_out": completion.tokens_out,
                            "latency_s": latency,
                            "finish_reason": completion.finish_reason,
                            "sent_max_tokens": sent,
                            "redacted": completion.redacted,
                        },
                    )
        except BaseException as exc:  # the callers sharing this call get the same error
            mine.set_exception(exc)
            raise
        finally:
            with _LOCK:
                del _IN_FLIGHT[flight]
        mine.set_result((completion, latency))
        self._record(key, purpose, blob, completion, latency, cached=hit is not None)
        return completion

    def _collect(
        self,
        key: str,
        blob: str,
        purpose: str,
        messages: list[Message],
        temperature: float,
        max_tokens: int,
        ask: tuple[int, dict[str, Any] | None, CompletionPrompt | None],
    ) -> Completion:
        """A round's answer to a request the cache does not hold (tasks/llm/batch.py): the
        placeholder, the request collected for the batch unless it feeds on a placeholder,
        asks again, is a completion (the batch sends chats), failed in a batch already, or
        cannot fit its window."""
        attempt, response_format, text = ask
        placeholder = Completion(PLACEHOLDER, 0, 0)
        if PLACEHOLDER in blob or attempt or text is not None or key in BATCH_FAILED:
            return placeholder
        sent: int | None = max_tokens or None
        if self.settings.llm.fit_max_tokens:
            try:
                sent, _ = self.window.fit(messages, sent)
            except ContextExceeded:  # the stage's own pass fails it as ever
                return placeholder
        body: dict[str, Any] = {
            "model": self.backend.model,
            "messages": messages,
            "temperature": temperature,
        }
        if sent is not None:
            body["max_tokens"] = sent
        if response_format is not None:
            body["response_format"] = response_format
        assert self.collector is not None
        self.collector.add(Pending(key, body, blob, purpose))
        return placeholder

    def _request(
        self,
        messages: list[Message],
        temperature: float | None,
        max_tokens: int | None,
        attempt: int,
        response_format: dict[str, Any] | None,
        sampler: str,
        prompt: str | None,
        stop: Sequence[str],
    ) -> tuple[CompletionPrompt | None, float, int, str, str]:
        """What `complete` sends and its cache key: (completion text or None, temperature,
        max_tokens, the request serialized, its key)."""
        text = self._completion_prompt(messages, prompt, stop)
        temperature = self.settings.llm.temperature if temperature is None else temperature
        max_tokens = self.settings.llm.max_tokens if max_tokens is None else max_tokens
        request: dict[str, object] = {
            "backend": self.backend.name,
            "model": self.backend.model,
            "fingerprint": self.backend.fingerprint(),
            "temperature": temperature,
            "max_tokens": max_tokens,
            "messages": messages,
        }
        if text is not None:
            del request["messages"]
            request.update(prompt=text.text, stop=list(text.stop))
        if attempt:
            request["attempt"] = attempt
        if response_format is not None:
            request["response_format"] = response_format
        if sampler:
            request["draw"] = sampler
        # Serialized once: the key is its hash and a new call's ledger row stores the text.
        blob = canonical_json(request)
        key = cache_key(blob)
        return text, temperature, max_tokens, blob, key

    def fits(self, messages: list[Message], max_tokens: int | None) -> bool:
        """Whether the prompt and its whole budget fit the endpoint's window (unknown, or
        `llm.fit_max_tokens` off: they do). Asks the server only where the cache does not
        hold the answer already (tasks/llm/window.py)."""
        if (text := self._completion_prompt(messages, None, ())) is not None:
            messages = [{"role": "user", "content": text.text}]
        return not self.settings.llm.fit_max_tokens or self.window.fits(messages, max_tokens)

    def _completion_prompt(
        self, messages: list[Message], prompt: str | None, stop: Sequence[str]
    ) -> CompletionPrompt | None:
        """What a completion sends (None: the backend sends chats)."""
        if self.backend.api() != "completions":
            return None
        return as_completion(messages) if prompt is None else CompletionPrompt(prompt, tuple(stop))

    def _call(
        self,
        key: str,
        messages: list[Message],
        purpose: str,
        temperature: float,
        max_tokens: int | None,
        response_format: dict[str, Any] | None = None,
        text: CompletionPrompt | None = None,
    ) -> tuple[Completion, float, int | None]:
        """One request under the endpoint's concurrency and rate limits (a slot first, so
        that a request counts against the rate when it is sent, not while it queues), with
        its budget fitted to the window once it holds its slot: a window that a rejection
        taught while it queued applies to it, so at most one rejection per window reaches
        the server; and the budget sent. A server that rejects the prompt's length teaches
        lilo its window: the request goes once more with the budget that window leaves, or
        fails as `context_exceeded`. A request sent to test a learned window (`fit`) that
        the server answers makes lilo forget that window. A completion's `text` is what the
        window counts, as one message."""
        if text is not None:
            messages = [{"role": "user", "content": text.text}]
        fit = self.settings.llm.fit_max_tokens
        slots = self.window.facts().slots  # asked of the server once
        if slots:
            self._endpoint.slots.narrow(slots)

        def sending() -> None:  # counted even if this process dies before the reply
            if self.log is not None:
                self.log.sent(key, self.backend.name, self.backend.model, purpose)

        shared = self._shared.slot() if self._shared else nullcontext()
        with self._endpoint.slots, shared:
            raise_if_stopping()  # a stopping run sends nothing new (tasks/lifetime.py)
            try:
                sent, testing = self.window.fit(messages, max_tokens) if fit else (max_tokens, 0)
            except ContextExceeded as exc:
                raise ContextExceeded(f"{self.backbone} failed for {purpose}: {exc}") from None
            # Tokens are only estimated where a tokens-per-minute limit or a cap needs them.
            rate = self._endpoint.rate
            budget = budget_for(str(self.log.path.parent) if self.log else "", self.settings.runner)
            estimate = (
                sum(count_word_tokens(m.get("content", "")) for m in messages)
                if rate.tpm or budget
                else 0
            )
            price = self.settings.llm.prices.get(self.backend.model)
            if self.backend.name == "offline":
                price = Price(input=0.0, output=0.0)  # lilo's own engine costs nothing
            # The cap holds this call's upper bound until its reply (or failure) settles it.
            held = budget.reserve(self.backbone, price, estimate, sent or 0) if budget else None
            charge = rate.acquire(estimate)
            started = time.perf_counter()
            ask: dict[str, Any] = {
                "temperature": temperature,
                "response_format": response_format,
                "prompt": text,
            }
            try:
                try:
                    with LIVE.call():  # in flight on the progress line (tasks/live.py)
                        completion = self.backend.complete(
                            messages, max_tokens=sent, sending=sending, **ask
                        )
                    if testing:
                        self.window.forget()
                except ContextRejected as rejected:
                    if not fit:
                        raise
                    self.window.learn(rejected, messages)
                    fitted, _ = self.window.fit(messages, max_tokens)
                    if fitted == sent:  # the same request again would get the same answer
                        window = f"window {rejected.window} (learned)"
                        raise ContextExceeded(f"context_exceeded: {window}: {rejected}") from None
                    sent = fitted
                    with LIVE.call():
                        completion = self.backend.complete(
                            messages, max_tokens=sent, sending=sending, **ask
                        )
            except Exception as exc:  # the backend already retried what is retryable
                # The endpoint's words are untrusted (some echo the key): redacted, and the
                # original left out of the chain that tracebacks and logs print.
                why = redact(with_cause(exc), configured_secrets(self.settings))
                # The kind survives the redaction: a rejected response_format has a fallback.
                kind = next(
                    (k for k in (ResponseFormatUnsupported, ContextExceeded) if isinstance(exc, k)),
                    LLMError,
                )
                raise kind(f"{self.backbone} failed for {purpose}: {why}") from None
            else:
                if budget and held:  # what it used, in place of its bound
                    used = (completion.tokens_in, completion.tokens_out)
                    budget.settle(held, sum(used), price.of(*used) if price else 0.0)
                    held = None
            finally:
                latency = time.perf_counter() - started
                if budget and held:  # failed or stopped: its bound let go
                    budget.settle(held, 0, 0.0)
        rate.settle(charge, completion.tokens_in + completion.tokens_out)
        # A reply may echo the key sent (a hostile endpoint): out before it is kept anywhere.
        reply, found = redact_reply(completion.text, configured_secrets(self.settings))
        if found:
            completion = replace(completion, text=reply, redacted=completion.redacted + found)
        return completion, latency, sent

    def _record(
        self,
        key: str,
        purpose: str,
        request: str,
        completion: Completion,
        latency_s: float,
        *,
        cached: bool,
    ) -> None:
        """Keeps the call; the request text only with a new response (a cached call's
        request is stored once already, with the response it produced)."""
        price = self.settings.llm.prices.get(self.backend.model)
        free = self.backend.name == "offline"  # lilo's own engine costs nothing
        cost = (
            0.0
            if free
            else price.of(completion.tokens_in, completion.tokens_out)
            if price
            else None
        )
        call = LLMCall(
            key=key,
            backend=self.backend.name,
            model=self.backend.model,
            purpose=purpose,
            tokens_in=completion.tokens_in,
            tokens_out=completion.tokens_out,
            latency_s=round(latency_s, 6),
            cached=cached,
            request="" if cached else request,
            response=completion.text,
            finish_reason=completion.finish_reason,
            redacted=completion.redacted,
            cost=cost,
        )
        if self.log is not None:
            self.log.append(call)
            # The log holds its texts: a stage's client keeps only what it counts, not each
            # reply (up to llm.max_reply_bytes) and prompt until the stage ends.
            call = replace(call, request="", response="")
        LIVE.ended(cached=cached, tokens=completion.tokens_in + completion.tokens_out)
        with self._lock:
            self.calls.append(call)

    def own(self) -> LLMClient:
        """A client of the same backend, cache, settings and call log, with calls of its
        own (`take_calls`): what one unit of work runs on."""
        return LLMClient(self.backend, self.cache, self.settings, self.log)

    def take_calls(self) -> list[LLMCall]:
        """The calls made since the last take: a task returns them to its flow."""
        with self._lock:
            calls, self.calls = self.calls, []
        return calls


def judge_settings(settings: Settings) -> Settings:
    """Settings whose `llm` section is the configured judge (docs/design.md §8: the judge is not the
    model under test): every endpoint setting the two share, and the judge's backend; the
    generation backbone's own settings when no judge is set."""
    judge = settings.judge
    if judge.backend is None:
        return settings
    shared = {name: getattr(judge, name) for name in ChatEndpointSettings.model_fields}
    return settings.with_overrides({"llm": {**shared, "backend": judge.backend}})


def make_judge_client(settings: Settings, log: CallLog | None = None) -> LLMClient:
    return make_client(judge_settings(settings), log)


def make_client(settings: Settings, log: CallLog | None = None) -> LLMClient:
    """The configured backend behind the shared cache; its calls appended to `log`."""
    backend: Backend
    if settings.llm.backend == "offline":
        from lilo.tasks.llm.offline import OfflineEngine

        backend = OfflineEngine(settings.llm.model, settings.llm.offline)
    else:
        from lilo.tasks.llm.openai_backend import OpenAIBackend

        backend = OpenAIBackend(settings.llm)
    return LLMClient(
        backend, DiskCache(settings.cache_dir / "llm", settings.data_dir), settings, log
    )
