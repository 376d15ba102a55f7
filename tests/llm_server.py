"""A loopback OpenAI-compatible endpoint for tests: /v1/chat/completions and /v1/embeddings.
It records each request and answers queued failure statuses first; then a chat gets the
scripted `respond(prompt, n)` (the last message's content and the number of messages; an
echo by default) and an embedding request gets `bag_of_words(text)` per input, unnormalised
and listed last input first (the API orders by `index`, not by position).
`PAPER` and `PAIRS` are a paper and the QA pairs a scripted model generates from it."""

from __future__ import annotations

import hashlib
import json
import re
import threading
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from tasks.config import Settings

__all__ = ["EMBEDDING_DIM", "PAIRS", "PAPER", "LLMServer", "bag_of_words"]

EMBEDDING_DIM = 64


def bag_of_words(text: str) -> list[float]:
    """A deterministic vector: each lower-case word adds 3 at a slot chosen by its hash (not
    1, so that a client that forgets to normalise is caught)."""
    vector = [0.0] * EMBEDDING_DIM
    for word in re.findall(r"\w+", text.lower()):
        vector[int(hashlib.sha256(word.encode()).hexdigest(), 16) % EMBEDDING_DIM] += 3.0
    return vector


PAPER = (
    "We introduce KernelForge, a kernel learning method for Gaussian processes.\n"
    "On the Kin40k benchmark, KernelForge obtains a test RMSE of 0.635.\n"
    "KernelForge reaches a negative log predictive density of 1.42 on the Airline-Passengers "
    "series.\nTraining takes 3.5 GPU hours on a single accelerator."
)
PAIRS = [
    {
        "question": "What test RMSE does KernelForge obtain on Kin40k?",
        "answer": "A test RMSE of 0.635.",
        "evidence": [{"paper": 1, "quote": "KernelForge obtains a test RMSE of 0.635."}],
    },
    {
        "question": "What negative log predictive density does KernelForge reach on Airline?",
        "answer": "1.42 on the Airline-Passengers series.",
        "evidence": [{"paper": 1, "quote": "negative log predictive density of 1.42"}],
    },
]


class LLMServer(ThreadingHTTPServer):
    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.requests: list[dict[str, Any]] = []
        self.failures: list[int] = []  # statuses to answer before succeeding
        self.failing = 0  # a status every request gets while set (an outage)
        self.respond: Callable[[str, int], str] = lambda prompt, n: f"echo: {prompt}"

    @property
    def prompts(self) -> list[list[dict[str, str]]]:
        return [r["messages"] for r in self.requests if "messages" in r]

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}/v1"

    def settings(self, data_dir: Any, **overrides: object) -> Settings:
        """Settings for the real OpenAI backend against this server, no retries."""
        llm = {"backend": "openai", "model": "scripted", "api_key": "sk-test", "retries": 0}
        llm["base_url"] = self.base_url
        return Settings(data_dir=data_dir).with_overrides({"llm": llm, **overrides})

    def __enter__(self) -> LLMServer:
        threading.Thread(target=self.serve_forever, daemon=True).start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.shutdown()
        self.server_close()


class _Handler(BaseHTTPRequestHandler):
    server: LLMServer

    def log_message(self, *args: object) -> None:
        pass

    def do_POST(self) -> None:  # noqa: N802 (http.server's naming)
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        self.server.requests.append(
            {"path": self.path, "auth": self.headers.get("Authorization"), **body}
        )
        status = self.server.failures.pop(0) if self.server.failures else self.server.failing
        if status:
            self._send(status, {"error": {"message": "busy"}})
            return
        if self.path.endswith("/embeddings"):
            self._embeddings(body)
            return
        content = self.server.respond(body["messages"][-1]["content"], len(body["messages"]))
        message = {"role": "assistant", "content": content}
        self._send(
            200,
            {
                "id": "chatcmpl-1",
                "object": "chat.completion",
                "created": 0,
                "model": body["model"],
                "choices": [{"index": 0, "message": message, "finish_reason": "stop"}],
                "usage": {"prompt_tokens": 11, "completion_tokens": 3, "total_tokens": 14},
            },
        )

    def _embeddings(self, body: dict[str, Any]) -> None:
        texts = [body["input"]] if isinstance(body["input"], str) else body["input"]
        data = [
            {"object": "embedding", "index": i, "embedding": bag_of_words(t)}
            for i, t in reversed(list(enumerate(texts)))
        ]
        tokens = sum(len(t.split()) for t in texts)
        usage = {"prompt_tokens": tokens, "total_tokens": tokens}
        self._send(200, {"object": "list", "data": data, "model": body["model"], "usage": usage})

    def _send(self, status: int, payload: dict[str, Any]) -> None:
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Retry-After", "0")
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)
