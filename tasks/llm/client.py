"""LLMClient: the one way lilo talks to a language model.

Every call goes through the content-addressed cache, single flight (identical requests in
flight at once share one call, also across the processes sharing the cache), a per-endpoint
concurrency limit and rate limit (requests and tokens per minute) and the backend's
retries; each call (hit or miss) is kept as an
`LLMCall` record, appended to the run's call log when the client has one (the flow folds
it into the warehouse) and kept for the task to return. A backend is anything with `name`,
`model`, `fingerprint()` and `complete()`.
"""

from __future__ import annotations

import threading
import time
from collections import deque
from concurrent.futures import Future
from dataclasses import dataclass
from typing import Protocol

from tasks.config import Settings
from tasks.lifetime import raise_if_stopping
from tasks.llm.cache import DiskCache, cache_key, canonical_json
from tasks.llm.ledger import CallLog
from tasks.records import LLMCall

__all__ = [
    "Backend",
    "Completion",
    "LLMClient",
    "LLMError",
    "Message",
    "judge_settings",
    "make_client",
    "make_judge_client",
]

Message = dict[str, str]


class LLMError(RuntimeError):
    """A call that failed after the backend's retries."""


@dataclass(frozen=True)
class Completion:
    text: str
    tokens_in: int
    tokens_out: int


class Backend(Protocol):
    name: str
    model: str

    def fingerprint(self) -> dict[str, object]:
        """What, beyond model and messages, changes this backend's output."""
        ...

    def complete(
        self, messages: list[Message], *, temperature: float, max_tokens: int
    ) -> Completion: ...


class RateLimit:
    """Requests and tokens per minute over a sliding 60 s window (0: no limit). A call is
    charged an estimate of its prompt's tokens when it starts and its real tokens (in and
    out) when it returns. With neither limit set it keeps no window at all."""

    def __init__(self, rpm: int, tpm: int) -> None:
        self.rpm, self.tpm = rpm, tpm
        self._window: deque[list[float]] = deque()  # [start time, tokens, in window]
        self._used = 0.0  # the tokens in the window, kept as entries come and go
        self._lock = threading.Lock()

    def acquire(self, tokens: int) -> list[float]:
        if not self.rpm and not self.tpm:
            return [0.0, 0.0, 0.0]
        while True:
            with self._lock:
                now = time.monotonic()
                while self._window and self._window[0][0] <= now - 60.0:
                    gone = self._window.popleft()
                    self._used -= gone[1]
                    gone[2] = 0.0
                requests_ok = not self.rpm or len(self._window) < self.rpm
                tokens_ok = not self.tpm or not self._window or self._used + tokens <= self.tpm
                if requests_ok and tokens_ok:
                    entry = [now, float(tokens), 1.0]
                    self._window.append(entry)
                    self._used += entry[1]
                    return entry
                wait = self._window[0][0] + 60.0 - now
            time.sleep(min(max(wait, 0.01), 1.0))

    def settle(self, entry: list[float], tokens: int) -> None:
        if not self.rpm and not self.tpm:
            return
        with self._lock:
            if entry[2]:  # still in the window
                self._used += tokens - entry[1]
            entry[1] = float(tokens)


@dataclass
class _Endpoint:
    slots: threading.BoundedSemaphore
    rate: RateLimit


_ENDPOINTS: dict[str, _Endpoint] = {}
_IN_FLIGHT: dict[str, Future[tuple[Completion, float]]] = {}
_LOCK = threading.Lock()


def _endpoint(name: str, settings: Settings) -> _Endpoint:
    """One concurrency limit and one rate limit per endpoint, shared by every client in
    this process (the first client's settings set them)."""
    cfg = settings.llm
    with _LOCK:
        if name not in _ENDPOINTS:
            slots = threading.BoundedSemaphore(max(1, cfg.concurrency))
            _ENDPOINTS[name] = _Endpoint(slots, RateLimit(cfg.rpm, cfg.tpm))
        return _ENDPOINTS[name]


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
        self._lock = threading.Lock()
        self._endpoint = _endpoint(f"{backend.name}:{settings.llm.base_url or ''}", settings)

    @property
    def backbone(self) -> str:
        """The label recorded with every result this client produced."""
        return f"{self.backend.name}:{self.backend.model}"

    def chat(
        self,
        messages: list[Message],
        *,
        purpose: str,
        temperature: float | None = None,
        max_tokens: int | None = None,
        attempt: int = 0,
    ) -> str:
        """The reply to `messages`. `attempt` > 0 asks the same prompt again for a fresh
        sample (a re-asked plan): it is part of the cache key, so a rerun replays each
        attempt from the cache instead of getting the first reply every time."""
        temperature = self.settings.llm.temperature if temperature is None else temperature
        max_tokens = max_tokens or self.settings.llm.max_tokens
        request: dict[str, object] = {
            "backend": self.backend.name,
            "model": self.backend.model,
            "fingerprint": self.backend.fingerprint(),
            "temperature": temperature,
            "max_tokens": max_tokens,
            "messages": messages,
        }
        if attempt:
            request["attempt"] = attempt
        # Serialized once: the key is its hash and a new call's ledger row stores the text.
        blob = canonical_json(request)
        key = cache_key(blob)
        hit = self.cache.get_json(key)
        if hit is not None:
            completion = Completion(hit["text"], hit["tokens_in"], hit["tokens_out"])
            self._record(key, purpose, blob, completion, hit["latency_s"], cached=True)
            return completion.text
        flight = f"{self.cache.root}:{key}"
        with _LOCK:
            shared = _IN_FLIGHT.get(flight)
            if shared is None:
                mine: Future[tuple[Completion, float]] = Future()
                _IN_FLIGHT[flight] = mine
        if shared is not None:  # the same request is in flight: share its reply
            completion, latency = shared.result()
            self._record(key, purpose, blob, completion, latency, cached=True)
            return completion.text
        try:
            # Looked at again once this call owns the key in this process and in every
            # process sharing the cache: an identical call that ended in between (here, or
            # in another Dask worker) wrote the cache before letting go.
            with self.cache.claim(key):
                hit = self.cache.get_json(key)
                if hit is not None:
                    completion = Completion(hit["text"], hit["tokens_in"], hit["tokens_out"])
                    latency = hit["latency_s"]
                else:
                    completion, latency = self._call(
                        key, messages, purpose, temperature, max_tokens
                    )
                    self.cache.put_json(
                        key,
                        {
                            "text": completion.text,
                            "tokens_in": completion.tokens_in,
                            "tokens_out": completion.tokens_out,
                            "latency_s": latency,
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
        return completion.text

    def _call(
        self,
        key: str,
        messages: list[Message],
        purpose: str,
        temperature: float,
        max_tokens: int,
    ) -> tuple[Completion, float]:
        """One request under the endpoint's rate and concurrency limits."""
        estimate = sum(len(m.get("content", "")) for m in messages) // 4
        charge = self._endpoint.rate.acquire(estimate)
        with self._endpoint.slots:
            raise_if_stopping()  # a stopping run sends nothing new (tasks/lifetime.py)
            if self.log is not None:  # counted even if this process dies before the reply
                self.log.sent(key, self.backend.name, self.backend.model, purpose)
            started = time.perf_counter()
            try:
                completion = self.backend.complete(
                    messages, temperature=temperature, max_tokens=max_tokens
                )
            except Exception as exc:  # the backend already retried what is retryable
                raise LLMError(f"{self.backbone} failed for {purpose}: {exc}") from exc
            finally:
                latency = time.perf_counter() - started
        self._endpoint.rate.settle(charge, completion.tokens_in + completion.tokens_out)
        return completion, latency

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
        )
        if self.log is not None:
            self.log.append(call)
        with self._lock:
            self.calls.append(call)

    def take_calls(self) -> list[LLMCall]:
        """The calls made since the last take: a task returns them to its flow."""
        with self._lock:
            calls, self.calls = self.calls, []
        return calls


def judge_settings(settings: Settings) -> Settings:
    """Settings whose `llm` section is the configured judge (DESIGN §8: the judge is not the
    model under test); the generation backbone's own settings when no judge is set."""
    judge = settings.judge
    if judge.backend is None:
        return settings
    return settings.with_overrides(
        {
            "llm": {
                "backend": judge.backend,
                "model": judge.model,
                "base_url": judge.base_url,
                "api_key": judge.api_key,
                "temperature": judge.temperature,
                "concurrency": judge.concurrency,
                "rpm": judge.rpm,
                "tpm": judge.tpm,
                "retries": judge.retries,
                "timeout_s": judge.timeout_s,
                "offline": judge.offline.model_dump(),
            }
        }
    )


def make_judge_client(settings: Settings, log: CallLog | None = None) -> LLMClient:
    return make_client(judge_settings(settings), log)


def make_client(settings: Settings, log: CallLog | None = None) -> LLMClient:
    """The configured backend behind the shared cache; its calls appended to `log`."""
    backend: Backend
    if settings.llm.backend == "offline":
        from tasks.llm.offline import OfflineEngine

        backend = OfflineEngine(settings)
    else:
        from tasks.llm.openai_backend import OpenAIBackend

        backend = OpenAIBackend(settings)
    return LLMClient(backend, DiskCache(settings.cache_dir / "llm"), settings, log)
