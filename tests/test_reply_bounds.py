"""Replies lilo did not make are bounded (docs/design.md §3, §9), against real loopback
servers: a huge or gzip-bombed reply fails its call while it is read, a reply dripped a byte
at a time gives up at the request's deadline (chat, embeddings, the arXiv feed and
e-prints), and nothing of it is cached."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from llm_server import LLMServer

from lilo.tasks.config import Settings
from lilo.tasks.embeddings import Embedder, EmbeddingError
from lilo.tasks.fetch import fetch_eprints, fetch_metadata
from lilo.tasks.fetch._http import FetchError
from lilo.tasks.llm import LLMError, make_client

HELLO = [{"role": "user", "content": "hello"}]


@pytest.fixture
def server() -> Iterator[LLMServer]:
    with LLMServer() as llm:
        yield llm


def _chat_settings(tmp_path: Path, server: LLMServer, **overrides: object) -> Settings:
    return server.settings(tmp_path, **{"llm.retries": 0, **overrides})


def _entries(settings: Settings, kind: str = "llm") -> list[Path]:
    return sorted(
        p for p in (settings.cache_dir / kind).rglob("*") if p.suffix in (".json", ".f32")
    )


def _within(seconds: float, work: Callable[[], Any]) -> tuple[Any, float]:
    """`work()`'s result or exception and how long it took; fails if it takes `seconds`
    (the thread is left behind: lilo before bounded replies never gave up)."""
    box: list[Any] = []

    def run() -> None:
        try:
            box.append(work())
        except Exception as exc:
            box.append(exc)

    started = time.monotonic()
    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    thread.join(seconds)
    assert box, f"still waiting after {seconds} s"
    return box[0], time.monotonic() - started


_CHILD = """
import json, resource, sys
from pathlib import Path
from lilo.tasks.config import Settings
from lilo.tasks.llm import make_client
llm = {"backend": "openai", "model": "m", "api_key": "k", "retries": 0, "base_url": sys.argv[2]}
client = make_client(Settings(data_dir=Path(sys.argv[1])).with_overrides({"llm": llm}))
client.chat([{"role": "user", "content": "warm up"}], purpose="warm")
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
try:
    outcome = f"{len(client.chat([{'role': 'user', 'content': 'hello'}], purpose='t')):,} chars"
except Exception as exc:
    outcome = str(exc)
grown = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before
print(json.dumps({"outcome": outcome, "grown_mb": grown / 1024}))
"""


def test_a_huge_reply_fails_the_call_while_read_in_bounded_memory(tmp_path, server):
    # The warm-up call is answered as usual; the next gets 200 MB, its length unsaid.
    def respond(prompt: str, n: int) -> str:
        server.reply_bytes = 0 if prompt == "warm up" else 200 * 2**20
        return f"echo: {prompt}"

    server.respond = respond
    child = subprocess.run(
        [sys.executable, "-c", _CHILD, str(tmp_path), server.base_url],
        capture_output=True,
        text=True,
        timeout=300,
    )
    result = json.loads(child.stdout.strip().splitlines()[-1])
    assert "larger than max_reply_bytes=16,000,000 bytes" in result["outcome"]
    assert result["grown_mb"] < 64  # lilo before bounds: about 1.2 GB for 200 MB
    settings = _chat_settings(tmp_path, server, **{"llm.model": "m"})
    assert len(_entries(settings)) == 1  # the warm-up's: the huge reply is not cached...
    server.respond, server.reply_bytes = (lambda prompt, n: f"echo: {prompt}"), 0
    assert make_client(settings).chat(HELLO, purpose="t") == "echo: hello"  # ...so asked again
    assert len(server.requests) == 3 and len(_entries(settings)) == 2


def test_a_gzip_bomb_is_refused_as_it_inflates(tmp_path, server):
    server.reply_bytes, server.gzip_replies = 100 * 2**20, True  # 100 KB on the wire
    llm = make_client(_chat_settings(tmp_path, server))
    with pytest.raises(LLMError, match=r"larger than max_reply_bytes=16,000,000 bytes"):
        llm.chat(HELLO, purpose="t")
    server.reply_bytes = 0  # a gzipped reply within the limit is read as any other
    assert llm.chat(HELLO, purpose="t") == "echo: hello"


def test_a_dripped_reply_gives_up_at_the_deadline(tmp_path, server):
    server.drip_s = 0.3  # the status line and headers too: about 100 s for the whole reply
    llm = make_client(_chat_settings(tmp_path, server, **{"llm.timeout_s": 2.0}))
    error, took = _within(20, lambda: llm.chat(HELLO, purpose="t"))
    assert isinstance(error, LLMError) and "timed out" in str(error)
    assert 2.0 <= took < 5.0
    assert _entries(_chat_settings(tmp_path, server)) == []


def _embedder(tmp_path: Path, server: LLMServer, **embedding: object) -> Embedder:
    section = {"backend": "openai", "base_url": server.base_url, "model": "bge", "retries": 0}
    return Embedder(Settings(data_dir=tmp_path).with_overrides({"embedding": section | embedding}))


def test_a_huge_embedding_reply_is_refused_and_not_cached(tmp_path, server):
    server.reply_bytes = 100 * 2**20  # whitespace: valid JSON, 100 MB of it
    with pytest.raises(EmbeddingError, match=r"larger than embedding.max_reply_bytes=64,000,000"):
        _embedder(tmp_path, server).embed(["a text"])
    assert list((tmp_path / "cache").rglob("*.f32")) == []


def test_a_dripped_embedding_reply_gives_up_at_the_deadline(tmp_path, server):
    server.drip_s = 0.3
    embedder = _embedder(tmp_path, server, timeout_s=2.0)
    error, took = _within(20, lambda: embedder.embed(["a text"]))
    assert isinstance(error, EmbeddingError) and took < 5.0


class _Drip(BaseHTTPRequestHandler):
    """An arXiv that sends everything, the status line first, one byte every 0.3 s."""

    def log_message(self, format: str, *args: object) -> None:
        """Quiet."""

    def do_GET(self) -> None:
        reply = b"HTTP/1.1 200 OK\r\nContent-Length: 1000\r\n\r\n" + b"\x1f" * 1000
        try:
            for i in range(len(reply)):
                self.wfile.write(reply[i : i + 1])
                self.wfile.flush()
                time.sleep(0.3)
        except OSError:
            pass  # the client gave up


@pytest.fixture
def dripping_arxiv(tmp_path: Path) -> Iterator[Settings]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Drip)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    base = f"http://127.0.0.1:{server.server_address[1]}"
    arxiv = {"api_url": f"{base}/api/query", "eprint_url": f"{base}/e-print/"}
    arxiv |= {"retries": 0, "delay_s": 0.0, "timeout_s": 2.0}
    try:
        yield Settings(data_dir=tmp_path).with_overrides({"arxiv": arxiv})
    finally:
        server.shutdown()
        server.server_close()


def test_a_dripped_e_print_gives_up_at_the_deadline(dripping_arxiv):
    result, took = _within(20, lambda: fetch_eprints(["2401.00001"], dripping_arxiv))
    raws, [failure] = result
    assert raws == [] and failure.reason == "fetch_failed"
    assert "no complete reply within timeout_s=2 s" in failure.detail
    assert 2.0 <= took < 5.0


def test_a_dripped_feed_gives_up_at_the_deadline(dripping_arxiv):
    error, took = _within(20, lambda: fetch_metadata(["2401.00001"], dripping_arxiv))
    assert isinstance(error, FetchError) and took < 5.0
