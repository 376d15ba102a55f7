"""The OpenAI backend through the real `openai` client against a loopback server that
speaks /v1/chat/completions, behind lilo's cache."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from tasks.config import Settings
from tasks.llm import LLMError, make_client


class _ChatServer(ThreadingHTTPServer):
    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), _ChatHandler)
        self.requests: list[dict] = []
        self.failures: list[int] = []  # statuses to answer before succeeding


class _ChatHandler(BaseHTTPRequestHandler):
    server: _ChatServer

    def log_message(self, *args: object) -> None:
        pass

    def do_POST(self) -> None:  # noqa: N802 (http.server's naming)
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        self.server.requests.append(
            {"path": self.path, "auth": self.headers.get("Authorization"), **body}
        )
        if self.server.failures:
            status = self.server.failures.pop(0)
            self.send_response(status)
            self.send_header("Retry-After", "0")
            self.send_header("Content-Type", "application/json")
            self.end_headers()
            self.wfile.write(json.dumps({"error": {"message": "busy"}}).encode())
            return
        question = body["messages"][-1]["content"]
        payload = {
            "id": "chatcmpl-1",
            "object": "chat.completion",
            "created": 0,
            "model": body["model"],
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": f"echo: {question}"},
                    "finish_reason": "stop",
                }
            ],
            "usage": {"prompt_tokens": 11, "completion_tokens": 3, "total_tokens": 14},
        }
        data = json.dumps(payload).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


@pytest.fixture
def chat_server() -> Iterator[_ChatServer]:
    server = _ChatServer()
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield server
    server.shutdown()
    server.server_close()


def _settings(tmp_path, server: _ChatServer, **llm: object) -> Settings:
    base_url = f"http://127.0.0.1:{server.server_address[1]}/v1"
    return Settings(data_dir=tmp_path).with_overrides(
        {
            "llm": {
                "backend": "openai",
                "model": "test-model",
                "base_url": base_url,
                "api_key": "sk-test",
                "retries": 2,
                **llm,
            }
        }
    )


def test_chat_goes_through_openai_client_and_cache(tmp_path, chat_server):
    llm = make_client(_settings(tmp_path, chat_server))
    messages = [{"role": "user", "content": "What is S_l?"}]

    assert llm.chat(messages, purpose="test") == "echo: What is S_l?"
    assert llm.chat(messages, purpose="test") == "echo: What is S_l?"

    assert len(chat_server.requests) == 1  # the second call was served from the cache
    sent = chat_server.requests[0]
    assert sent["path"] == "/v1/chat/completions"
    assert sent["model"] == "test-model"
    assert sent["temperature"] == 0.3 and sent["max_tokens"] == 8192
    assert sent["auth"] == "Bearer sk-test"
    first, second = llm.take_calls()
    assert (first.cached, second.cached) == (False, True)
    assert (first.tokens_in, first.tokens_out) == (11, 3)
    assert llm.backbone == "openai:test-model"


def test_cache_key_covers_parameters(tmp_path, chat_server):
    llm = make_client(_settings(tmp_path, chat_server))
    messages = [{"role": "user", "content": "same"}]
    llm.chat(messages, purpose="a", temperature=0.0)
    llm.chat(messages, purpose="a", temperature=0.7)
    assert len(chat_server.requests) == 2


def test_retries_429_and_5xx(tmp_path, chat_server):
    chat_server.failures = [429, 503]
    llm = make_client(_settings(tmp_path, chat_server))
    assert llm.chat([{"role": "user", "content": "hi"}], purpose="t") == "echo: hi"
    assert len(chat_server.requests) == 3


def test_exhausted_retries_raise_llm_error(tmp_path, chat_server):
    chat_server.failures = [500, 500, 500]
    llm = make_client(_settings(tmp_path, chat_server, retries=1))
    with pytest.raises(LLMError, match="openai:test-model failed"):
        llm.chat([{"role": "user", "content": "hi"}], purpose="t")


def test_missing_endpoint_says_what_to_do(tmp_path, monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    settings = Settings(data_dir=tmp_path).with_overrides({"llm.backend": "openai"})
    with pytest.raises(ValueError, match="LILO_LLM__API_KEY"):
        make_client(settings)
