"""`requests`, bounded as tasks/bounded_http.py says (arXiv's feed and e-prints use it): each
request ends within `Bounds.timeout_s`, connecting to last byte, and its reply is refused once
it passes `Bounds.max_bytes`, compressed or not.

The deadline reaches the sockets through urllib3's public extension points: the pools make
their connections from our `ConnectionCls`, whose `connect` starts within the time left and
hands on a socket whose every send, receive and TLS handshake waits at most the time left
(a `socket.socket` subclass, and for TLS the context's `sslsocket_class`). The body is read
through `ReplyBody` in place of `Response.raw`, so `Response.content` and `iter_content`
count and inflate it under the same deadline.
"""

from __future__ import annotations

import socket
import ssl
from collections.abc import Callable, Iterator
from typing import Any, TypeVar
from urllib.parse import urlsplit

import requests
import urllib3
from requests.adapters import HTTPAdapter
from requests.exceptions import ContentDecodingError, InvalidProxyURL
from urllib3.connection import HTTPConnection, HTTPSConnection
from urllib3.connectionpool import HTTPConnectionPool, HTTPSConnectionPool

from lilo.tasks.bounded_http import (
    ACCEPT_ENCODING,
    Bounds,
    Deadline,
    ReplyBody,
    ReplyRefused,
    time_left,
    within,
)
from lilo.tasks.errors import LiloError

__all__ = ["BoundedSession", "DeadlinePassed"]

T = TypeVar("T")


class DeadlinePassed(LiloError):
    """A request that did not end within its `timeout_s`. Not an OSError, so urllib3 and
    requests pass it on as it is instead of rewording it as a read timeout."""


class _ByDeadline:
    """Socket operations that wait at most the time the active request has left."""

    def _bounded(self: Any, operation: Callable[..., T], *args: Any) -> T:
        timeout = self.gettimeout()
        left = time_left(timeout, DeadlinePassed)
        if left == timeout:  # no request active, or its deadline is further off
            return operation(*args)
        self.settimeout(left)
        try:
            return operation(*args)
        except TimeoutError:
            time_left(None, DeadlinePassed)  # the deadline's words, where it was that
            raise
        finally:
            self.settimeout(timeout)

    def recv(self, *args: Any) -> bytes:
        return self._bounded(super().recv, *args)  # type: ignore[misc]  # a mixin's super()

    def recv_into(self, *args: Any) -> int:
        return self._bounded(super().recv_into, *args)  # type: ignore[misc]  # a mixin's super()

    def send(self, *args: Any) -> int:
        return self._bounded(super().send, *args)  # type: ignore[misc]  # a mixin's super()

    def sendall(self, *args: Any) -> None:
        return self._bounded(super().sendall, *args)  # type: ignore[misc]  # a mixin's super()


class _Socket(_ByDeadline, socket.socket):
    @classmethod
    def adopt(cls, sock: socket.socket) -> _Socket:
        """`sock`'s connection (its file descriptor and timeout) as a `_Socket`."""
        timeout = sock.gettimeout()
        adopted = cls(fileno=sock.detach())
        adopted.settimeout(timeout)
        return adopted


class _TLSSocket(_ByDeadline, ssl.SSLSocket):
    def do_handshake(self, *args: Any) -> None:
        self._bounded(super().do_handshake, *args)


def _tls_context() -> ssl.SSLContext:
    """urllib3's default context, making `_TLSSocket`s. Certificates are loaded as requests
    asks (`verify`: certifi's bundle, or REQUESTS_CA_BUNDLE)."""
    context = urllib3.util.create_urllib3_context()
    context.sslsocket_class = _TLSSocket
    return context


class _Connects:
    """A urllib3 connection that connects within the time left and keeps a `_ByDeadline`
    socket (TLS sockets are made so by the context)."""

    timeout: Any
    sock: Any

    def connect(self) -> None:
        self.timeout = time_left(self.timeout, DeadlinePassed)
        super().connect()  # type: ignore[misc]  # a mixin: urllib3's connection follows
        if type(self.sock) is socket.socket:
            self.sock = _Socket.adopt(self.sock)


class _Connection(_Connects, HTTPConnection):
    pass


class _TLSConnection(_Connects, HTTPSConnection):
    pass


class _Pool(HTTPConnectionPool):
    ConnectionCls = _Connection


class _TLSPool(HTTPSConnectionPool):
    ConnectionCls = _TLSConnection


_POOLS = {"http": _Pool, "https": _TLSPool}


class _Body:
    """A reply's body in place of `Response.raw`: requests reads it through `stream` (for
    `content` and `iter_content`), which reads the raw bytes as `ReplyBody` says."""

    def __init__(self, raw: urllib3.BaseHTTPResponse, body: ReplyBody) -> None:
        self._raw, self._body = raw, body

    def stream(self, amt: int | None = None, decode_content: bool | None = None) -> Iterator[bytes]:
        """The body (inflated by `ReplyBody`, never by urllib3), in pieces of any size."""
        return self._body.read(self._raw.stream(1 << 16, decode_content=False))

    def read(self, amt: int | None = None, decode_content: bool | None = None) -> bytes:
        """What is left of the body (requests reads a redirect's body so)."""
        return b"".join(self.stream())

    def close(self) -> None:
        self._raw.close()

    def release_conn(self) -> None:
        self._raw.release_conn()


class _Adapter(HTTPAdapter):
    """requests' adapter, its connections and replies bounded by `bounds`."""

    def __init__(self, bounds: Bounds) -> None:
        self._bounds, self._tls = bounds, _tls_context()
        super().__init__()

    def init_poolmanager(self, *args: Any, **pool_kwargs: Any) -> None:
        super().init_poolmanager(*args, ssl_context=self._tls, **pool_kwargs)
        self.poolmanager.pool_classes_by_scheme = _POOLS

    def proxy_manager_for(self, proxy: str, **proxy_kwargs: Any) -> Any:
        if not proxy.lower().startswith("http://"):  # socks or TLS to the proxy: other sockets
            raise InvalidProxyURL(
                f"{proxy}: lilo sends these requests directly or through an http:// proxy, "
                "where it can bound them; set HTTPS_PROXY/HTTP_PROXY to one, or unset it"
            )
        manager = super().proxy_manager_for(proxy, ssl_context=self._tls, **proxy_kwargs)
        manager.pool_classes_by_scheme = _POOLS
        return manager

    def send(
        self,
        request: requests.PreparedRequest,
        stream: bool = False,
        timeout: Any = None,
        verify: bool | str = True,
        cert: Any = None,
        proxies: dict[str, str] | None = None,
    ) -> requests.Response:
        """`timeout` is `bounds.timeout_s`, whatever the caller asks."""
        request.headers["Accept-Encoding"] = ACCEPT_ENCODING
        deadline = Deadline.start(self._bounds.timeout_s)
        with within(deadline):
            response = super().send(request, stream, self._bounds.timeout_s, verify, cert, proxies)
        if request.method == "HEAD":  # no body, whatever its headers say
            return response
        url = urlsplit(response.url)._replace(query="").geturl()
        try:
            body = ReplyBody(response.headers, url, self._bounds, deadline, ContentDecodingError)
        except ReplyRefused:
            response.close()
            raise
        if body.inflates:  # inflated by ReplyBody: the headers say what `content` holds
            del response.headers["Content-Encoding"]
            response.headers.pop("Content-Length", None)
        response.raw = _Body(response.raw, body)
        return response


class BoundedSession(requests.Session):
    """A `requests.Session` whose every request ends within `bounds.timeout_s`, from
    connecting to the last byte (a later one raises `DeadlinePassed`), and reads at most
    `bounds.max_bytes` (a larger reply raises `ReplyRefused`). Redirects are followed, each
    with its own deadline."""

    def __init__(self, bounds: Bounds) -> None:
        super().__init__()
        for prefix in ("http://", "https://"):
            self.mount(prefix, _Adapter(bounds))
