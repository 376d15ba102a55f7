"""A loopback arXiv: the Atom API at `/api/query` and e-prints at `/e-print/<id>`, served
from a corpus folder written by `write_corpus`. Tests and the demo point `arxiv.api_url` and
`arxiv.eprint_url` at it (docs/design.md §3), so fetching runs through the real `arxiv` client and
`requests` with no network. `inject` scripts failures (429 + Retry-After, 5xx, dropped
connections) so that retry and backoff are tested against real HTTP."""

from __future__ import annotations

import re
import threading
import time
from collections import deque
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from types import TracebackType
from typing import Any
from urllib.parse import parse_qs, urlsplit

from lilo.tasks.synthetic._atom import feed, matches
from lilo.tasks.synthetic.manifest import Manifest, ManifestItem, load_manifest

__all__ = ["Mirror", "serve_forever"]

DROP = 0  # an injected "status" that closes the connection without any response
_VERSION_RE = re.compile(r"v\d+$")
_CONTENT_TYPES = (
    (".tar.gz", "application/gzip"),
    (".gz", "application/gzip"),
    (".tar", "application/x-eprint-tar"),
    (".pdf", "application/pdf"),
)


class _Server(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, address: tuple[str, int], corpus_dir: Path) -> None:
        super().__init__(address, _Handler)
        self.corpus_dir = corpus_dir
        self.manifest: Manifest = load_manifest(corpus_dir)
        self.by_id: dict[str, ManifestItem] = {i.arxiv_id: i for i in self.manifest.items}
        self.requests_log: list[tuple[str, int, float]] = []
        self.user_agents: list[str] = []
        self.faults: list[tuple[str, deque[int], float | None]] = []
        self.lock = threading.Lock()

    def handle_error(self, request: Any, client_address: Any) -> None:
        """Quiet: a client that hangs up is not the mirror's problem."""

    def next_fault(self, path: str) -> tuple[int, float | None] | None:
        with self.lock:
            for prefix, statuses, retry_after in self.faults:
                if path.startswith(prefix) and statuses:
                    return statuses.popleft(), retry_after
        return None

    def log(self, path: str, status: int, user_agent: str) -> None:
        with self.lock:
            self.requests_log.append((path, status, time.monotonic()))
            self.user_agents.append(user_agent)


class _Handler(BaseHTTPRequestHandler):
    server: _Server

    def log_message(self, format: str, *args: Any) -> None:
        """Quiet: the mirror keeps its own `requests_log` instead of writing to stderr."""

    def do_GET(self) -> None:
        url = urlsplit(self.path)
        fault = self.server.next_fault(url.path)
        if fault is not None:
            status, retry_after = fault
            self._log(status)
            if status == DROP:
                self.close_connection = True
                return
            headers = {"Retry-After": f"{retry_after:g}"} if retry_after is not None else {}
            self._send(status, b"injected fault\n", "text/plain", headers)
            return
        if url.path == "/api/query":
            self._query(parse_qs(url.query))
        elif url.path.startswith("/e-print/"):
            self._eprint(url.path.removeprefix("/e-print/"))
        else:
            self._reply(404, b"not found: use /api/query or /e-print/<id>\n", "text/plain")

    def _query(self, params: dict[str, list[str]]) -> None:
        def one(name: str, default: str) -> str:
            return params.get(name, [default])[0]

        ids = [_VERSION_RE.sub("", i) for i in one("id_list", "").split(",") if i]
        query = one("search_query", "")
        if ids:
            hits = [self.server.by_id[i] for i in ids if i in self.server.by_id]
            hits = [i for i in hits if not query or matches(i, query)]
        else:
            hits = [i for i in self.server.manifest.items if query and matches(i, query)]
        start, size = int(one("start", "0")), int(one("max_results", "10"))
        host, port = self.server.server_address[:2]
        assert isinstance(host, str)  # an AF_INET server's address
        body = feed(hits[start : start + size], len(hits), start, f"http://{host}:{port}")
        self._reply(200, body, "application/atom+xml; charset=utf-8")

    def _eprint(self, raw_id: str) -> None:
        item = self.server.by_id.get(_VERSION_RE.sub("", raw_id))
        if item is None:
            self._reply(404, f"no e-print {raw_id} in this mirror\n".encode(), "text/plain")
            return
        content_type = next(
            (ct for suffix, ct in _CONTENT_TYPES if item.filename.endswith(suffix)),
            "application/octet-stream",
        )
        self._reply(
            200, (self.server.corpus_dir / "eprints" / item.filename).read_bytes(), content_type
        )

    def _reply(self, status: int, body: bytes, content_type: str) -> None:
        self._log(status)
        self._send(status, body, content_type, {})

    def _send(self, status: int, body: bytes, content_type: str, headers: dict[str, str]) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        for name, value in headers.items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(body)

    def _log(self, status: int) -> None:
        self.server.log(urlsplit(self.path).path, status, self.headers.get("User-Agent", ""))


class Mirror:
    """`with Mirror(corpus_dir) as m:` serves the corpus on 127.0.0.1 until the block ends."""

    def __init__(self, corpus_dir: Path, host: str = "127.0.0.1", port: int = 0) -> None:
        self._server = _Server((host, port), Path(corpus_dir))
        # Polled every 20 ms for the block's end (the default 0.5 s delays each close).
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True
        )
        bound, port = self._server.server_address[:2]
        assert isinstance(bound, str)  # an AF_INET server's address
        self.base_url = f"http://{bound}:{port}"
        self.api_url = f"{self.base_url}/api/query"
        self.eprint_url = f"{self.base_url}/e-print/"

    @property
    def requests_log(self) -> list[tuple[str, int, float]]:
        """(path, status, time.monotonic()) per request; status 0 = dropped connection."""
        return self._server.requests_log

    @property
    def user_agents(self) -> list[str]:
        return self._server.user_agents

    def inject(
        self, path_prefix: str, statuses: list[int], retry_after: float | None = None
    ) -> None:
        """The next requests whose path starts with `path_prefix` get `statuses` in order
        (0 drops the connection); 429/503 replies carry `Retry-After` when it is given."""
        with self._server.lock:
            self._server.faults.append((path_prefix, deque(statuses), retry_after))

    def __enter__(self) -> Mirror:
        self._thread.start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join()


def serve_forever(corpus_dir: Path, host: str = "127.0.0.1", port: int = 8008) -> None:
    """Blocking server for `lilo mirror`: point arxiv.api_url/eprint_url at it."""
    server = _Server((host, port), Path(corpus_dir))
    try:
        server.serve_forever()
    finally:
        server.server_close()
