"""LLMClient: the one way lilo talks to a language model.

Every call goes through the content-addressed cache, a per-endpoint concurrency limit and
the backend's retries; each call (hit or miss) is kept as an `LLMCall` record that the
task returns and the flow writes. A backend is anything with `name`, `model`,
`fingerprint()` and `complete()`.
"""

from __future__ import annotations

import json
import threading
import time
from dataclasses import dataclass
from typing import Protocol

from tasks.config import Settings
from tasks.llm.cache import DiskCache, cache_key
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


_SEMAPHORES: dict[str, threading.BoundedSemaphore] = {}
_SEMAPHORES_LOCK = threading.Lock()


def _endpoint_semaphore(endpoint: str, limit: int) -> threading.BoundedSemaphore:
    with _SEMAPHORES_LOCK:
        return _SEMAPHORES.setdefault(endpoint, threading.BoundedSemaphore(max(1, limit)))


class LLMClient:
    def __init__(self, backend: Backend, cache: DiskCache, settings: Settings) -> None:
        self.backend = backend
        self.cache = cache
        self.settings = settings
        self.calls: list[LLMCall] = []
        self._lock = threading.Lock()
        endpoint = f"{backend.name}:{settings.llm.base_url or ''}"
        self._slots = _endpoint_semaphore(endpoint, settings.llm.concurrency)

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
        key = cache_key(request)
        hit = self.cache.get_json(key)
        if hit is not None:
            completion = Completion(hit["text"], hit["tokens_in"], hit["tokens_out"])
            self._record(key, purpose, request, completion, hit["latency_s"], cached=True)
            return completion.text
        started = time.perf_counter()
        with self._slots:
            try:
                completion = self.backend.complete(
                    messages, temperature=temperature, max_tokens=max_tokens
                )
            except Exception as exc:  # the backend already retried what is retryable
                raise LLMError(f"{self.backbone} failed for {purpose}: {exc}") from exc
        latency = time.perf_counter() - started
        self.cache.put_json(
            key,
            {
                "text": completion.text,
                "tokens_in": completion.tokens_in,
                "tokens_out": completion.tokens_out,
                "latency_s": latency,
            },
        )
        self._record(key, purpose, request, completion, latency, cached=False)
        return completion.text

    def _record(
        self,
        key: str,
        purpose: str,
        request: dict[str, object],
        completion: Completion,
        latency_s: float,
        *,
        cached: bool,
    ) -> None:
        call = LLMCall(
            key=key,
            backend=self.backend.name,
            model=self.backend.model,
            purpose=purpose,
            tokens_in=completion.tokens_in,
            tokens_out=completion.tokens_out,
            latency_s=round(latency_s, 6),
            cached=cached,
            request=json.dumps(request, ensure_ascii=False),
            response=completion.text,
        )
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
                "retries": judge.retries,
                "timeout_s": judge.timeout_s,
                "offline": judge.offline.model_dump(),
            }
        }
    )


def make_judge_client(settings: Settings) -> LLMClient:
    return make_client(judge_settings(settings))


def make_client(settings: Settings) -> LLMClient:
    """The configured backend behind the shared cache."""
    backend: Backend
    if settings.llm.backend == "offline":
        from tasks.llm.offline import OfflineEngine

        backend = OfflineEngine(settings)
    else:
        from tasks.llm.openai_backend import OpenAIBackend

        backend = OpenAIBackend(settings)
    return LLMClient(backend, DiskCache(settings.cache_dir / "llm"), settings)
