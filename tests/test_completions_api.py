"""`llm.api`: a base model asked with `/v1/completions` (the caller's prompt and stop, or the
messages as one text), `auto` choosing by what the server says of its chat template, the
API in the cache key, and a probe run in its completion form beside the chat one."""

from __future__ import annotations

import re
import struct
from pathlib import Path

import duckdb
import pytest
from llm_server import LLMServer, Model

from lilo.flows.cli._local_model import has_chat_template
from lilo.tasks.llm import make_client
from lilo.tasks.llm.types import COMPLETION_CUE, ResponseFormatUnsupported


def _client(server: LLMServer, data: Path, api: str):
    return make_client(server.settings(data, **{"llm.api": api}))


def test_a_completion_sends_the_prompt_its_stop_and_max_tokens(tmp_path):
    with LLMServer() as server:
        server.respond = lambda prompt, n: ' 42"} and more'
        llm = _client(server, tmp_path, "completions")
        reply = llm.complete(
            [{"role": "user", "content": "chat form"}],
            purpose="t",
            temperature=0.0,
            max_tokens=50,
            prompt='{"answer": "',
            stop=['"'],
        )
        sent = server.requests[-1]
        assert sent["path"] == "/v1/completions" and "messages" not in sent
        assert (sent["prompt"], sent["stop"], sent["max_tokens"]) == ('{"answer": "', ['"'], 50)
        assert (reply.text, reply.finish_reason) == (" 42", "stop")
        assert (reply.tokens_in, reply.tokens_out) == (11, 3)
        # A caller with no completion form: its messages as one text, no stop sent.
        messages = [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Hi"}]
        llm.complete(messages, purpose="t", max_tokens=5)
        assert server.requests[-1]["prompt"] == "Be brief.\n\nHi" + COMPLETION_CUE
        assert "stop" not in server.requests[-1]
        # A rerun is served from the cache; a response_format has no completion to go to.
        llm.complete(messages, purpose="t", max_tokens=5)
        assert len(server.requests) == 2
        with pytest.raises(ResponseFormatUnsupported):
            llm.complete(messages, purpose="t", response_format={"type": "json_object"})


@pytest.mark.parametrize(("template", "api"), [("", "completions"), ("{{ messages }}", "chat")])
def test_auto_asks_completions_where_the_server_says_no_chat_template(tmp_path, template, api):
    with LLMServer() as server:
        server.model = Model(window=4096, kind="llama.cpp", chat_template=template)
        llm = _client(server, tmp_path, "auto")
        llm.complete([{"role": "user", "content": "Hi"}], purpose="t", max_tokens=5)
        assert llm.backend.api() == api
        path = server.requests[-1]["path"]
        assert path == ("/v1/completions" if api == "completions" else "/v1/chat/completions")
        assert "GET /props" in server.asked


def test_auto_asks_chats_where_the_server_does_not_say(tmp_path):
    with LLMServer() as server:  # OpenAI's API: no /props
        llm = _client(server, tmp_path, "auto")
        llm.complete([{"role": "user", "content": "Hi"}], purpose="t", max_tokens=5)
        assert server.requests[-1]["path"] == "/v1/chat/completions"


def test_chat_and_completion_replies_never_share_a_cache_entry(tmp_path):
    messages = [{"role": "user", "content": "Hi"}]
    with LLMServer() as server:
        keys = set()
        for api in ("chat", "completions", "chat", "completions"):
            llm = _client(server, tmp_path, api)
            llm.complete(messages, purpose="t", max_tokens=5)
            keys |= {c.key for c in llm.take_calls()}
        assert [r["path"] for r in server.requests] == ["/v1/chat/completions", "/v1/completions"]
        assert len(keys) == 2
    chat = server.settings(tmp_path)
    assert chat.config_hash() == server.settings(tmp_path, **{"llm.api": "chat"}).config_hash()
    assert chat.config_hash() != server.settings(tmp_path, **{"llm.api": "auto"}).config_hash()


def test_the_window_counts_the_completion_text_as_sent(tmp_path):
    """llama-server counts the text alone: the budget is what the prompt's words leave of
    the window, no chat template's tokens taken off."""
    with LLMServer() as server:
        server.model = Model(window=200, kind="llama.cpp")
        llm = _client(server, tmp_path, "completions")
        llm.complete([], purpose="t", max_tokens=1000, prompt="word " * 50, stop=["\n"])
        assert server.requests[-1]["max_tokens"] == 200 - 50 - 16  # window.MARGIN_TOKENS


def _gguf(path: Path, metadata: dict[str, str | int]) -> Path:
    """A GGUF (version 3) header holding `metadata`: strings and uint32s, no tensors."""

    def text(value: str) -> bytes:
        return struct.pack("<Q", len(value.encode())) + value.encode()

    body = b""
    for key, value in metadata.items():
        if isinstance(value, str):
            body += text(key) + struct.pack("<I", 8) + text(value)
        else:
            body += text(key) + struct.pack("<II", 4, value)
    tokens = struct.pack("<IQ", 8, 3) + b"".join(text(t) for t in ("<s>", "a", "b"))
    body += text("tokenizer.ggml.tokens") + struct.pack("<I", 9) + tokens
    path.write_bytes(b"GGUF" + struct.pack("<IQQ", 3, 0, len(metadata) + 1) + body)
    return path


def test_a_gguf_says_whether_it_has_a_chat_template(tmp_path):
    base = {"general.architecture": "gemma3", "gemma3.context_length": 32768}
    assert has_chat_template(_gguf(tmp_path / "base.gguf", base)) is False
    chat = {**base, "tokenizer.chat_template": "{{ messages }}"}
    assert has_chat_template(_gguf(tmp_path / "chat.gguf", chat)) is True
    (tmp_path / "junk.gguf").write_bytes(b"GGUF" + b"\xff" * 40)
    assert has_chat_template(tmp_path / "junk.gguf") is None


def _kv_value(prompt: str, n: int) -> str:
    """A base model that reads the records: the value of the key the prompt ends with."""
    key = re.search(r'"([0-9a-f-]{36})": "$', prompt)
    if key is None:
        return "no idea"
    return re.search(f'"{key[1]}": "([0-9a-f-]{{36}})"', prompt)[1] + '",\n "next'


def test_a_probe_run_in_its_completion_form_is_a_curve_of_its_own(tmp_path, prefect_harness):
    from lilo.flows.probe import probe_flow

    data = tmp_path / "data"
    probe = {"kv_keys": [10], "positions": [0, 9], "examples": 2}
    with LLMServer() as server:
        server.respond = _kv_value
        done = probe_flow("kv", server.settings(data, probe=probe, **{"llm.api": "completions"}))
        assert done.prompts == "lilo+completions" and done.failed == 0
        texts = [r for r in server.requests if r["path"] == "/v1/completions"]
        assert len(texts) == 4 and all(r["stop"] == ['"'] for r in texts)
        assert all(re.search(r'Value:\n "[0-9a-f-]{36}": "$', r["prompt"]) for r in texts)
        chat = probe_flow("kv", server.settings(data, probe=probe))
        assert chat.prompts == "lilo" and len(server.requests) == 8
    con = duckdb.connect(str(data / "published" / "lilo.duckdb"), read_only=True)
    try:
        rows = con.execute(
            "SELECT prompts, position, accuracy FROM probe_curve WHERE task = 'kv' "
            "ORDER BY prompts, position"
        ).fetchall()
    finally:
        con.close()
    assert rows == [("lilo", 0, 0.0), ("lilo", 9, 0.0)] + [
        ("lilo+completions", 0, 1.0),
        ("lilo+completions", 9, 1.0),
    ]
