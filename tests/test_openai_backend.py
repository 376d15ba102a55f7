"""The OpenAI backend through the real `openai` client against a loopback server that
speaks /v1/chat/completions, behind lilo's cache."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from llm_server import LLMServer

from lilo.tasks.config import Settings
from lilo.tasks.config_loading import load_settings
from lilo.tasks.errors import InputError
from lilo.tasks.llm import LLMError, make_client


@pytest.fixture
def chat_server() -> Iterator[LLMServer]:
    with LLMServer() as server:
        yield server


def _settings(tmp_path, server: LLMServer, **llm: object) -> Settings:
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
    monkeypatch.delenv("LILO_LLM__API_KEY", raising=False)
    settings = Settings(data_dir=tmp_path).with_overrides({"llm.backend": "openai"})
    with pytest.raises(InputError, match="LILO_LLM__API_KEY"):
        make_client(settings)


def test_a_server_on_another_port_with_the_same_weights_is_served_from_the_cache(tmp_path):
    """`llm.weights` (what `--local-model` sets) stands for the address in the cache key: a
    rerun on a new free port asks nothing; without it, another address is another model."""
    messages = [{"role": "user", "content": "What is S_c?"}]
    with LLMServer() as first, LLMServer() as second:
        weights = {"weights": "gemma-3-270m-q4_k_m.gguf:0123456789abcdef"}
        make_client(_settings(tmp_path, first, **weights)).chat(messages, purpose="t")
        make_client(_settings(tmp_path, second, **weights)).chat(messages, purpose="t")
        assert (len(first.requests), len(second.requests)) == (1, 0)
        make_client(_settings(tmp_path, second)).chat(messages, purpose="t")
        assert len(second.requests) == 1


def test_an_empty_reply_is_asked_again_or_kept_as_the_reference_keeps_it(tmp_path, chat_server):
    """By default an empty reply is asked again, then the call fails; `llm.empty_reply=keep`
    (the paper profile) keeps it, as the reference appends it as an empty paragraph, and a
    rerun replays it from the cache."""
    chat_server.respond = lambda prompt, n: ""
    messages = [{"role": "user", "content": "hi"}]
    with pytest.raises(LLMError, match="empty reply"):
        make_client(_settings(tmp_path / "a", chat_server)).chat(messages, purpose="t")
    assert len(chat_server.requests) == 3  # asked, then the 2 retries
    keep = _settings(tmp_path / "b", chat_server, empty_reply="keep")
    assert make_client(keep).chat(messages, purpose="t") == ""
    assert make_client(keep).chat(messages, purpose="t") == ""
    assert len(chat_server.requests) == 4  # kept at once, then served from the cache
    assert load_settings(overrides={"profile": "paper"}).llm.empty_reply == "keep"
