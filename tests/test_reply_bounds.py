"""Replies lilo did not make are bounded and checked (docs/design.md §3, §9), against real
loopback servers: a huge or gzip-bombed reply fails its call while it is read, a reply
dripped a byte at a time gives up at the request's deadline (chat, embeddings, the arXiv feed
and e-prints), usage counts no model reports are recorded as unknown, and nothing of it is
cached; a cache entry that cannot be trusted is a miss, made again and replaced."""

from __future__ import annotations

import datetime
import gzip
import ipaddress
import json
import math
import ssl
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from llm_server import LLMServer, kernel_samples, seed_samples, serve_in_background

from lilo.flows._run import recorded_run
from lilo.flows.generate import generate_flow
from lilo.tasks.bounded_http import ReplyRefused
from lilo.tasks.cache import DiskCache
from lilo.tasks.config import Settings
from lilo.tasks.embeddings import Embedder, EmbeddingError
from lilo.tasks.errors import InputError
from lilo.tasks.fetch import fetch_eprints, fetch_metadata
from lilo.tasks.fetch._http import FetchError
from lilo.tasks.llm import LLMError, make_client
from lilo.tasks.llm.ledger import CallLog, call_log_path, read_calls
from lilo.tasks.synthetic.replies import judge_reply
from lilo.warehouse import Warehouse

HELLO = [{"role": "user", "content": "hello"}]


@pytest.fixture
def server() -> Iterator[LLMServer]:
    with LLMServer() as llm:
        yield llm


def _chat_settings(tmp_path: Path, server: LLMServer, **overrides: object) -> Settings:
    return server.settings(tmp_path, **{"llm.retries": 0, **overrides})


def _entries(settings: Settings, kind: str = "llm") -> list[Path]:
    """The cache's replies and vectors, not what it keeps of an endpoint (`*.facts.json`)."""
    return sorted(
        p
        for p in (settings.cache_dir / kind).rglob("*")
        if p.suffix in (".json", ".f32") and not p.name.endswith(".facts.json")
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


@pytest.mark.e2e  # a lilo client in a subprocess, its memory measured
@pytest.mark.slow
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


@pytest.mark.parametrize("bad", ["NaN", "-Infinity", "1e30", "-5", "2.5"])
def test_usage_that_is_no_token_count_is_recorded_as_unknown(tmp_path, server, caplog, bad):
    server.usage_text = f'{{"prompt_tokens": {bad}, "completion_tokens": 7, "total_tokens": 3}}'
    settings = _chat_settings(tmp_path, server)
    llm = make_client(settings)
    assert llm.chat(HELLO, purpose="t") == "echo: hello"
    [call] = llm.take_calls()
    assert (call.tokens_in, call.tokens_out) == (0, 7)
    assert "prompt_tokens" in caplog.text and "recorded as 0" in caplog.text
    [entry] = _entries(settings)
    assert json.loads(entry.read_text())["tokens_in"] == 0


def _model(prompt: str, n: int) -> str:
    return judge_reply(prompt) or "KernelForge0 reaches a test RMSE of 0.635 on Kin40k. " * 20


def test_a_run_with_nan_usage_completes(prefect_harness, tmp_path, server):
    server.respond = _model
    server.usage_text = (
        '{"prompt_tokens": NaN, "completion_tokens": Infinity, "total_tokens": 1e30}'
    )
    settings = server.settings(
        tmp_path,
        **{
            "llm.retries": 0,
            "qa.quota_single": 2,
            "qa.quota_cross": 0,
            "generate.methods": ["single"],
            "generate.target_words": [300],
            "winrate_against": "",
        },
    )
    seed_samples(settings, kernel_samples(1))
    with recorded_run(settings, "nan-usage") as run:  # lilo before: TransactionException
        run.stage(generate_flow)
    assert run.row["status"] == "completed"
    with Warehouse(settings.db_path) as wh:
        rows = wh.rows("SELECT tokens_in, tokens_out, error FROM fct_generations")
    assert rows == [{"tokens_in": 0, "tokens_out": 0, "error": ""}]


def test_a_key_echoed_in_a_reply_is_redacted_before_it_is_kept(tmp_path, server):
    """A hostile endpoint puts the request's Authorization value in its completion: the key
    is in neither the reply, the call's record (what fct_llm_calls and llm_cache store)
    nor the cache file, and the call records how many it replaced; a second client replays
    the redacted reply from the cache without a call."""
    key = "sk-test-123SECRET"
    server.respond = lambda prompt, n: f"Done. {server.requests[-1]['auth']}"
    settings = _chat_settings(tmp_path, server, **{"llm.api_key": key})
    client = make_client(settings)
    reply = client.complete(HELLO, purpose="t")
    assert server.requests[-1]["auth"] == f"Bearer {key}"
    assert reply.text == "Done. Bearer [redacted]" and reply.redacted == 1
    [call] = client.take_calls()
    assert (call.response, call.redacted) == ("Done. Bearer [redacted]", 1)
    assert _entries(settings) and not [p for p in _entries(settings) if key in p.read_text()]
    again = make_client(settings)
    assert again.complete(HELLO, purpose="t") == reply and len(server.requests) == 1
    assert again.take_calls()[0].redacted == 1


def test_a_client_with_a_call_log_keeps_its_calls_counted_not_their_texts(tmp_path, server):
    """A stage's client appends each call, reply and prompt, to its call log; what it keeps
    for `take_calls` counts the call without its texts, so a stage of many big replies
    does not hold them all until it ends."""
    reply = "x" * 1_000_000
    server.respond = lambda prompt, n: reply
    log = CallLog(call_log_path(tmp_path, "r", "score"))
    client = make_client(_chat_settings(tmp_path, server), log)
    assert client.complete(HELLO, purpose="t").text == reply
    [kept] = client.take_calls()
    [logged], _ = read_calls(log.path)
    assert (kept.request, kept.response) == ("", "") and logged.response == reply
    assert (kept.key, kept.tokens_out) == (logged.key, logged.tokens_out)


def _poison(path: Path, how: str) -> None:
    entry = json.loads(path.read_text())
    if how == "too_large":
        entry["text"] = "a" * 17_000_000
    elif how == "cut_short":
        path.write_text(path.read_text()[:20])
        return
    elif how == "not_a_completion":
        entry = ["echo: hello"]
    else:
        entry["tokens_in"] = {"nan": math.nan, "negative": -5, "huge": 1e30}[how]
    path.write_text(json.dumps(entry))


@pytest.mark.parametrize("how", ["too_large", "cut_short", "not_a_completion", "nan", "negative"])
def test_an_untrusted_cache_entry_is_a_miss_and_replaced(tmp_path, server, how):
    settings = _chat_settings(tmp_path, server)
    make_client(settings).chat(HELLO, purpose="t")
    [entry] = _entries(settings)
    _poison(entry, how)
    llm = make_client(settings)
    assert llm.chat(HELLO, purpose="t") == "echo: hello"
    [call] = llm.take_calls()
    assert not call.cached and (call.tokens_in, call.tokens_out) == (11, 3)
    assert len(server.requests) == 2
    assert json.loads(entry.read_text())["tokens_in"] == 11  # replaced
    assert make_client(settings).chat(HELLO, purpose="t") == "echo: hello"
    assert len(server.requests) == 2


def _embedder(tmp_path: Path, server: LLMServer, **embedding: object) -> Embedder:
    section = {"backend": "openai", "base_url": server.base_url, "model": "bge", "retries": 0}
    settings = Settings(data_dir=tmp_path).with_overrides({"embedding": section | embedding})
    return Embedder(settings.embedding, tmp_path)


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


@pytest.mark.parametrize("vector", [[math.nan] * 8, [1e39] * 8, [1.0, [2.0]], ["x"] * 8])
def test_vectors_of_no_finite_numbers_fail_and_are_not_cached(tmp_path, server, vector):
    server.embed = lambda text: vector
    with pytest.raises(EmbeddingError, match="not rows of finite numbers"):
        _embedder(tmp_path, server).embed(["a text"])
    assert list((tmp_path / "cache").rglob("*.f32")) == []


@pytest.mark.parametrize(
    "stored",
    [np.full(64, np.nan, np.float32).tobytes(), b"\x00\x00\x80", np.ones(64, np.float32).tobytes(),
     np.zeros(70_000, np.float32).tobytes()],
    ids=["nan", "cut_short", "not_unit", "too_large"],
)  # fmt: skip
def test_an_untrusted_cached_vector_is_a_miss_and_replaced(tmp_path, server, stored):
    embedder = _embedder(tmp_path, server)
    good = embedder.embed(["a text"])
    [entry] = list((tmp_path / "cache").rglob("*.f32"))
    entry.write_bytes(stored)
    again = _embedder(tmp_path, server).embed(["a text"])
    assert np.array_equal(again, good) and len(server.requests) == 2
    assert entry.read_bytes() == good[0].tobytes()


class _HostileArxiv(BaseHTTPRequestHandler):
    """An arXiv (feed and e-prints) answering as its server's `mode` says: `drip` sends
    everything, the status line first, one byte every 0.3 s; `huge` says its body is a
    terabyte and sends none of it; `gzip` and `x-gzip` send 20 MB of zeros compressed to
    20 kB in that encoding; `whole` sends a small gzipped .tex."""

    server: _ArxivServer

    def log_message(self, format: str, *args: object) -> None:
        """Quiet."""

    def do_GET(self) -> None:
        mode = self.server.mode
        try:
            if mode == "drip":
                reply = b"HTTP/1.1 200 OK\r\nContent-Length: 1000\r\n\r\n" + b"\x1f" * 1000
                for i in range(len(reply)):
                    self.wfile.write(reply[i : i + 1])
                    self.wfile.flush()
                    time.sleep(0.3)
                return
            self.send_response(200)
            if mode == "huge":
                self.send_header("Content-Length", str(10**12))
                self.end_headers()
                self.wfile.flush()
                self.rfile.read(1)  # until the client hangs up
                return
            body = gzip.compress(b"\0" * 20_000_000 if mode != "whole" else b"\\section{A}")
            if mode != "whole":
                self.send_header("Content-Encoding", mode)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
        except OSError:
            pass  # the client gave up


class _ArxivServer(ThreadingHTTPServer):
    daemon_threads = True
    mode = "drip"
    settings: Settings  # pointing at this server, with a 2 s deadline and 1 MB limits


@contextmanager
def _arxiv_server(
    tmp_path: Path, wrap: Callable[[Any], Any] | None = None
) -> Iterator[_ArxivServer]:
    """A `_HostileArxiv`, over TLS where `wrap` wraps its socket."""
    server = _ArxivServer(("127.0.0.1", 0), _HostileArxiv)
    scheme = "http"
    if wrap is not None:
        server.socket, scheme = wrap(server.socket), "https"
    serve_in_background(server)
    base = f"{scheme}://127.0.0.1:{server.server_address[1]}"
    arxiv = {"api_url": f"{base}/api/query", "eprint_url": f"{base}/e-print/"}
    arxiv |= {"retries": 0, "delay_s": 0.0, "timeout_s": 2.0}
    arxiv |= {"max_eprint_bytes": 1_000_000, "max_feed_bytes": 1_000_000}
    server.settings = Settings(data_dir=tmp_path).with_overrides({"arxiv": arxiv})
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()


@pytest.fixture
def hostile_arxiv(tmp_path: Path) -> Iterator[_ArxivServer]:
    with _arxiv_server(tmp_path) as server:
        yield server


def test_a_dripped_e_print_gives_up_at_the_deadline(hostile_arxiv):
    result, took = _within(20, lambda: fetch_eprints(["2401.00001"], hostile_arxiv.settings))
    raws, [failure] = result
    assert raws == [] and failure.reason == "fetch_failed"
    assert "no complete reply within timeout_s=2 s" in failure.detail
    assert 2.0 <= took < 5.0


def test_a_dripped_feed_gives_up_at_the_deadline(hostile_arxiv):
    error, took = _within(20, lambda: fetch_metadata(["2401.00001"], hostile_arxiv.settings.arxiv))
    assert isinstance(error, FetchError) and took < 5.0
    assert "no complete reply within timeout_s=2 s" in str(error)


def test_an_e_print_said_to_be_too_large_is_refused_before_it_is_read(hostile_arxiv):
    hostile_arxiv.mode = "huge"  # a body that never comes: reading it would wait 2 s
    result, took = _within(20, lambda: fetch_eprints(["2401.00001"], hostile_arxiv.settings))
    raws, [failure] = result
    assert raws == [] and failure.reason == "fetch_failed"
    assert "larger than arxiv.max_eprint_bytes=1,000,000 bytes" in failure.detail
    assert took < 1.5


@pytest.mark.parametrize("encoding", ["gzip", "x-gzip"])
def test_a_compressed_bomb_is_refused_as_it_inflates(hostile_arxiv, encoding):
    hostile_arxiv.mode = encoding
    settings = hostile_arxiv.settings
    raws, [failure] = fetch_eprints(["2401.00001"], settings)
    assert raws == [] and "larger than arxiv.max_eprint_bytes=1,000,000" in failure.detail
    with pytest.raises(ReplyRefused, match=r"larger than arxiv.max_feed_bytes=1,000,000"):
        fetch_metadata(["2401.00001"], settings.arxiv)
    assert list(settings.archive_dir.rglob("*")) == []


def _self_signed(folder: Path) -> tuple[Path, Path]:
    """A certificate for 127.0.0.1 that is its own authority, and its key."""
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "lilo test arXiv")])
    now = datetime.datetime.now(datetime.UTC)
    public = key.public_key()
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(public)
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(days=1))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .add_extension(
            x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]),
            critical=False,
        )
        .add_extension(x509.SubjectKeyIdentifier.from_public_key(public), critical=False)
        .add_extension(x509.AuthorityKeyIdentifier.from_issuer_public_key(public), critical=False)
        .sign(key, hashes.SHA256())
    )
    cert_path, key_path = folder / "cert.pem", folder / "key.pem"
    cert_path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_path.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    return cert_path, key_path


def _tls(folder: Path) -> tuple[Path, Callable[[Any], Any]]:
    """A self-signed authority's certificate, and what wraps a server's socket in TLS with it."""
    cert, key = _self_signed(folder)
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.load_cert_chain(cert, key)
    return cert, lambda sock: context.wrap_socket(sock, server_side=True)


def test_e_prints_over_tls_are_verified_and_bounded_too(tmp_path, monkeypatch):
    cert, wrap = _tls(tmp_path)
    with _arxiv_server(tmp_path / "data", wrap) as server:
        settings = server.settings
        [failure] = fetch_eprints(["2401.00001"], settings)[1]  # an authority no one trusts
        assert "CERTIFICATE_VERIFY_FAILED" in failure.detail
        monkeypatch.setenv("REQUESTS_CA_BUNDLE", str(cert))  # as requests reads it
        result, took = _within(20, lambda: fetch_eprints(["2401.00001"], settings))
        assert "no complete reply within timeout_s=2 s" in result[1][0].detail
        assert 2.0 <= took < 5.0
        server.mode = "whole"
        [raw], [] = fetch_eprints(["2401.00001"], settings)
        assert raw.format == "tex.gz"


@contextmanager
def _llm_over_tls(wrap: Callable[[Any], Any]) -> Iterator[tuple[LLMServer, str]]:
    """An `LLMServer` serving over TLS (`wrap`), and its https base URL."""
    server = LLMServer()
    server.socket = wrap(server.socket)
    with server:
        yield server, server.base_url.replace("http://", "https://")


def test_chat_and_embeddings_over_tls_are_verified(tmp_path, monkeypatch):
    """The openai client's transport verifies TLS as httpx2 does, its context made once per
    CA source: an authority no one trusts is refused, saying so, one named by SSL_CERT_FILE
    trusted. A process keeps one client per endpoint, so each case has its own server."""
    cert, wrap = _tls(tmp_path)
    refused = "Connection error: .*CERTIFICATE_VERIFY_FAILED"
    with _llm_over_tls(wrap) as (server, base_url):
        data = tmp_path / "untrusted"
        with pytest.raises(LLMError, match=refused):
            make_client(_chat_settings(data, server, **{"llm.base_url": base_url})).chat(
                HELLO, purpose="t"
            )
        with pytest.raises(EmbeddingError, match=refused):
            _embedder(data, server, base_url=base_url).embed(["a text"])
        assert server.requests == []
    monkeypatch.setenv("SSL_CERT_FILE", str(cert))
    with _llm_over_tls(wrap) as (server, base_url):
        data = tmp_path / "trusted"
        chat = make_client(_chat_settings(data, server, **{"llm.base_url": base_url}))
        assert chat.chat(HELLO, purpose="t") == "echo: hello"
        assert _embedder(data, server, base_url=base_url).embed(["a text"]).shape[0] == 1
        assert len(server.requests) == 2


def test_certificates_that_do_not_load_are_an_input_error_naming_the_variable(
    tmp_path, server, monkeypatch
):
    (tmp_path / "bad.pem").write_text("not a certificate")
    monkeypatch.setenv("SSL_CERT_FILE", str(tmp_path / "bad.pem"))
    settings = _chat_settings(tmp_path / "data", server)
    with pytest.raises(InputError, match=r"certificates of SSL_CERT_FILE=.*bad\.pem: .*unset it"):
        make_client(settings)
    assert server.requests == []


def test_a_disk_cache_entry_over_the_reader_limit_is_a_miss(tmp_path):
    cache = DiskCache(tmp_path / "cache", tmp_path)
    cache.put_bytes("ab" * 32, b"x" * 100)
    assert cache.get_bytes("ab" * 32, max_bytes=99) is None
    assert cache.get_bytes("ab" * 32, max_bytes=100) == b"x" * 100


def test_a_redirect_to_another_origin_is_not_followed(tmp_path, server):
    """A 307 to another host would carry the key and the prompt there: the call fails naming
    the redirect, and the other host gets no request."""
    from lilo.tasks.bounded_http import Bounds, ReplyRefused, bounded_client

    class Redirect(BaseHTTPRequestHandler):
        def log_message(self, *args: object) -> None:
            pass

        def do_POST(self) -> None:  # noqa: N802 (http.server's naming)
            self.send_response(307)
            self.send_header("Location", f"{server.base_url}/chat/completions")
            self.send_header("Content-Length", "0")
            self.end_headers()

    hop = ThreadingHTTPServer(("127.0.0.1", 0), Redirect)
    serve_in_background(hop)
    try:
        url = f"http://127.0.0.1:{hop.server_address[1]}/v1/chat/completions"
        with bounded_client(Bounds(10.0, 1_000_000, "llm.max_reply_bytes")) as http:
            with pytest.raises(ReplyRefused, match="redirected to another origin"):
                http.post(url, json={"model": "m"}, headers={"Authorization": "Bearer sk-x"})
    finally:
        hop.shutdown()
        hop.server_close()
    assert server.requests == []
