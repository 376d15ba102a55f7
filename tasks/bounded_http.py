"""Bounds on every request lilo sends across the network, and the HTTP client of chat
completions and embeddings (the `openai` client runs on it). arXiv's feed and e-prints go
through `requests`, bounded by the same rules (tasks/bounded_requests.py).

A request is bounded as a whole, not read by read: `Bounds.timeout_s` holds from connecting
to the reply's last byte (every socket operation waits at most the time left, so a server
that drips its reply, headers included, cannot hold a request open), and the reply is counted
while it is read and abandoned with `ReplyRefused` once it passes `Bounds.max_bytes`, before
it fills memory (`ReplyBody`). Compressed replies (gzip, deflate) are inflated there, under
the same count, so a small bomb cannot grow past it either. Each retry of a request has its
own deadline.

When a run stops (tasks/lifetime.py) every connection these clients opened is shut down
(`hang_up`): a thread blocked reading a reply wakes at once, and a server that stops
computing on a disconnect (llama-server, vLLM, llama-cpp-python's server while it streams;
docs/design.md §9) stops computing the abandoned request.
"""

from __future__ import annotations

import functools
import os
import socket
import ssl
import threading
import time
import weakref
import zlib
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import httpcore2
import httpx2

from lilo.tasks.errors import InputError, LiloError
from lilo.tasks.lifetime import on_stop

__all__ = [
    "ACCEPT_ENCODING",
    "Bounds",
    "Deadline",
    "ReplyBody",
    "ReplyRefused",
    "bounded_client",
    "hang_up",
    "time_left",
    "within",
]

# The encodings lilo asks for and inflates itself; zlib reads both headers (gzip's, zlib's).
ACCEPT_ENCODING = "gzip, deflate"
_INFLATED = frozenset({"gzip", "x-gzip", "deflate"})
_WITH_HEADER = 32 + zlib.MAX_WBITS


class ReplyRefused(LiloError):
    """A reply lilo stops reading: larger than its limit, or in an encoding it did not ask
    for. Not retried: the same server would send it again."""


@dataclass(frozen=True)
class Bounds:
    timeout_s: float
    max_bytes: int
    setting: str  # the setting that raises max_bytes, named when a reply passes it


@dataclass(frozen=True)
class Deadline:
    at: float  # time.monotonic()
    timeout_s: float

    @classmethod
    def start(cls, timeout_s: float) -> Deadline:
        """The deadline of a request sent now."""
        return cls(time.monotonic() + timeout_s, timeout_s)


_ACTIVE = threading.local()  # the deadline of the request this thread is sending or reading


@contextmanager
def within(deadline: Deadline) -> Iterator[None]:
    """The socket operations of this thread, inside the block, end by `deadline`."""
    outer = getattr(_ACTIVE, "deadline", None)
    _ACTIVE.deadline = deadline
    try:
        yield
    finally:
        _ACTIVE.deadline = outer


def time_left(timeout: float | None, error: type[Exception]) -> float | None:
    """`timeout`, or the time the active request has left if that is shorter; `error` when
    none is left."""
    deadline: Deadline | None = getattr(_ACTIVE, "deadline", None)
    if deadline is None:
        return timeout
    left = deadline.at - time.monotonic()
    if left <= 0:
        raise error(f"no complete reply within timeout_s={deadline.timeout_s:g} s")
    return left if timeout is None else min(timeout, left)


class ReplyBody:
    """A reply's body as it is read: by its request's deadline, inflated where the server
    compressed it, and counted. Made from the reply's headers, which it checks first: an
    encoding lilo did not ask for, or a Content-Length over the limit, is refused before a
    byte of the body is read. `broken` is the HTTP library's error for a compressed body
    that does not inflate."""

    def __init__(
        self,
        headers: Mapping[str, str],
        url: str,
        bounds: Bounds,
        deadline: Deadline,
        broken: type[Exception],
    ) -> None:
        encoding = headers.get("Content-Encoding", "").strip().lower() or "identity"
        if encoding not in _INFLATED | {"identity"}:
            raise ReplyRefused(f"the reply from {url} is in {encoding}, which lilo never asks for")
        length = headers.get("Content-Length", "")
        if encoding == "identity" and length.isdigit() and int(length) > bounds.max_bytes:
            raise _too_large(url, bounds)
        self.inflates = encoding != "identity"
        self._url, self._bounds, self._deadline, self._broken = url, bounds, deadline, broken
        self._inflate = zlib.decompressobj(_WITH_HEADER) if self.inflates else None

    def read(self, chunks: Iterator[bytes]) -> Iterator[bytes]:
        """The body from `chunks` (as the server sent it), each pulled by the deadline."""
        seen = 0
        while True:
            with within(self._deadline):
                raw = next(chunks, None)
            if raw is None:
                if self._inflate is not None and not self._inflate.eof:
                    raise self._broken(f"compressed reply from {self._url} cut short")
                return
            data = raw if self._inflate is None else self._inflated(raw, seen)
            seen += len(data)
            if seen > self._bounds.max_bytes:
                raise _too_large(self._url, self._bounds)
            if data:
                yield data

    def _inflated(self, raw: bytes, seen: int) -> bytes:
        assert self._inflate is not None
        try:  # never more than one byte past the limit, however small the input
            return self._inflate.decompress(raw, self._bounds.max_bytes - seen + 1)
        except zlib.error as exc:
            raise self._broken(f"unreadable compressed reply from {self._url}: {exc}") from exc


def _too_large(url: str, bounds: Bounds) -> ReplyRefused:
    return ReplyRefused(
        f"the reply from {url} is larger than {bounds.setting}={bounds.max_bytes:,} bytes: "
        f"raise {bounds.setting} if such a reply is expected"
    )


# The connections these clients opened and have not closed, for `hang_up`.
_OPEN: weakref.WeakSet[_Stream] = weakref.WeakSet()


def hang_up() -> None:
    """Shut every open connection down, both ways: its reads end at once, in whatever
    thread they wait, and its server sees the client gone. Never blocks (a stop hook)."""
    for stream in list(_OPEN):
        sock = stream.get_extra_info("socket")
        if isinstance(sock, socket.socket):
            try:
                sock.shutdown(socket.SHUT_RDWR)
            except OSError:  # closed already
                pass


on_stop(hang_up)


class _Stream(httpcore2.NetworkStream):
    """A connection whose reads, writes and TLS handshake wait at most the time left."""

    def __init__(self, inner: httpcore2.NetworkStream) -> None:
        self._inner = inner
        _OPEN.add(self)

    def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        try:
            return self._inner.read(max_bytes, time_left(timeout, httpcore2.ReadTimeout))
        except httpcore2.ReadTimeout:
            time_left(None, httpcore2.ReadTimeout)  # the deadline's words, where it was that
            raise

    def write(self, buffer: bytes, timeout: float | None = None) -> None:
        try:
            self._inner.write(buffer, time_left(timeout, httpcore2.WriteTimeout))
        except httpcore2.WriteTimeout:
            time_left(None, httpcore2.WriteTimeout)
            raise

    def close(self) -> None:
        _OPEN.discard(self)
        self._inner.close()

    def start_tls(
        self, ssl_context: Any, server_hostname: str | None = None, timeout: float | None = None
    ) -> httpcore2.NetworkStream:
        left = time_left(timeout, httpcore2.ConnectTimeout)
        return _Stream(self._inner.start_tls(ssl_context, server_hostname, left))

    def get_extra_info(self, info: str) -> Any:
        return self._inner.get_extra_info(info)


class _Network(httpcore2.NetworkBackend):
    """The connection pool's sockets, as `_Stream`s."""

    def __init__(self, inner: httpcore2.NetworkBackend) -> None:
        self._inner = inner

    def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Iterable[Any] | None = None,
    ) -> httpcore2.NetworkStream:
        left = time_left(timeout, httpcore2.ConnectTimeout)
        return _Stream(self._inner.connect_tcp(host, port, left, local_address, socket_options))

    def connect_unix_socket(
        self, path: str, timeout: float | None = None, socket_options: Iterable[Any] | None = None
    ) -> httpcore2.NetworkStream:
        left = time_left(timeout, httpcore2.ConnectTimeout)
        return _Stream(self._inner.connect_unix_socket(path, left, socket_options))

    def sleep(self, seconds: float) -> None:
        self._inner.sleep(seconds)


class _Body(httpx2.SyncByteStream):
    """A reply's body, read as `ReplyBody` says."""

    def __init__(self, inner: httpx2.SyncByteStream, body: ReplyBody) -> None:
        self._inner, self._body = inner, body

    def __iter__(self) -> Iterator[bytes]:
        return self._body.read(iter(self._inner))

    def close(self) -> None:
        self._inner.close()


class _Transport(httpx2.HTTPTransport):
    """httpx2's transport (proxies and TLS as configured), its requests bounded."""

    def __init__(self, bounds: Bounds, **options: Any) -> None:
        super().__init__(**options)
        # The pool makes every connection through its network backend: the one way in to
        # the sockets, for deadlines that cover the headers as well as the body.
        self._pool._network_backend = _Network(self._pool._network_backend)
        self._bounds = bounds

    def handle_request(self, request: httpx2.Request) -> httpx2.Response:
        request.headers["Accept-Encoding"] = ACCEPT_ENCODING
        deadline = Deadline.start(self._bounds.timeout_s)
        with within(deadline):
            response = super().handle_request(request)
        if request.method == "HEAD":  # no body, whatever its headers say
            return response
        url = str(request.url.copy_with(query=None))
        try:
            body = ReplyBody(response.headers, url, self._bounds, deadline, httpx2.DecodingError)
        except ReplyRefused:
            response.close()
            raise
        if body.inflates:  # inflated here, so httpx2 must not inflate it again
            del response.headers["Content-Encoding"]
            response.headers.pop("Content-Length", None)
        assert isinstance(response.stream, httpx2.SyncByteStream)  # HTTPTransport's replies
        response.stream = _Body(response.stream, body)
        return response


class _Client(httpx2.Client):
    """An httpx2 client whose every transport, the environment's proxies' too, is bounded."""

    def __init__(self, bounds: Bounds, **options: Any) -> None:
        self._bounds = bounds  # before httpx2 makes the transports
        super().__init__(**options)

    # Both take httpx2's transport options as keywords, as httpx2 passes them.
    def _init_transport(  # type: ignore[override]  # options by keyword
        self, transport: Any = None, **options: Any
    ) -> httpx2.BaseTransport:
        return _Transport(self._bounds, **options)

    def _init_proxy_transport(  # type: ignore[override]  # options by keyword
        self, proxy: Any, **options: Any
    ) -> httpx2.BaseTransport:
        return _Transport(self._bounds, proxy=proxy, **options)

    def _build_redirect_request(
        self, request: httpx2.Request, response: httpx2.Response
    ) -> httpx2.Request:
        """A redirect within the request's origin; one to another origin (where the key and
        the prompt would go next) is `ReplyRefused`, naming it."""
        redirect = super()._build_redirect_request(request, response)
        before, after = request.url, redirect.url
        if (before.scheme, before.host, before.port) != (after.scheme, after.host, after.port):
            response.close()
            shown = str(after.copy_with(query=None))
            raise ReplyRefused(
                f"{request.url.copy_with(query=None)}: redirected to another origin ({shown}): "
                "not followed"
            )
        return redirect


def bounded_client(bounds: Bounds, **options: Any) -> httpx2.Client:
    """An `httpx2.Client` (`options` as its own; redirects within an origin followed) whose
    every request ends within `bounds.timeout_s` and reads at most `bounds.max_bytes`: a
    longer one raises httpx2's timeout errors, a larger reply `ReplyRefused`. It verifies TLS
    as httpx2 does by default, with one context per process and CA source (`_verifying`)."""
    options.setdefault("follow_redirects", True)
    if "verify" not in options and "trust_env" not in options:
        env = os.environ
        options["verify"] = _verifying(env.get("SSL_CERT_FILE"), env.get("SSL_CERT_DIR"))
    return _Client(bounds, timeout=bounds.timeout_s, **options)


@functools.cache
def _verifying(cert_file: str | None, cert_dir: str | None) -> ssl.SSLContext:
    """httpx2's default verifying context for these `SSL_CERT_FILE`/`SSL_CERT_DIR` values (it
    reads them itself), made once: loading the CA bundle takes about 30 ms, which each new
    client paid again. A context is safe to share between clients and threads. Certificates
    that do not load are an InputError naming the variable, not an unnamed OSError."""
    try:
        return httpx2.create_ssl_context()
    except OSError as exc:  # ssl.SSLError too
        if not (cert_file or cert_dir):
            raise  # the system's own certificates: nothing the user set to name
        # httpx2 reads SSL_CERT_FILE first, SSL_CERT_DIR only without it.
        source = f"SSL_CERT_FILE={cert_file}" if cert_file else f"SSL_CERT_DIR={cert_dir}"
        raise InputError(
            f"TLS: cannot load the certificates of {source}: {exc}; point it at a PEM "
            "bundle of CA certificates, or unset it"
        ) from None
