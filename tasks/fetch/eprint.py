"""E-print archives from arXiv's `/e-print/<id>` endpoint into a content-addressed store
(DESIGN §3): polite pacing shared by every thread, retries with exponential backoff that
honour `Retry-After`, atomic writes, and no second download of what the store already has."""

from __future__ import annotations

import gzip
import hashlib
import io
import os
import tarfile
import tempfile
import threading
import time
import zlib
from email.utils import parsedate_to_datetime
from pathlib import Path

import requests

from tasks.config import Settings
from tasks.fetch.metadata import PaperMeta, strip_version
from tasks.records import Quarantine, RawSource

__all__ = ["detect_format", "fetch_eprints"]

_RETRYABLE = {429, 500, 502, 503, 504}


class _Pacer:
    """One request at a time per `delay_s`, across all threads of the process: arXiv's
    limit is per client, not per thread."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._last = float("-inf")

    def wait(self, delay_s: float) -> None:
        with self._lock:
            pause = self._last + delay_s - time.monotonic()
            if pause > 0:
                time.sleep(pause)
            self._last = time.monotonic()


_PACER = _Pacer()


class _FetchError(Exception):
    """A download that will not succeed: recorded as a `fetch_failed` quarantine."""


def detect_format(data: bytes) -> str:
    """By magic bytes, not by what the server claims: tar.gz | tex.gz | tar | pdf | unknown."""
    if data[:2] == b"\x1f\x8b":
        try:
            head = zlib.decompressobj(16 + zlib.MAX_WBITS).decompress(data, 512)
        except zlib.error:
            return "unknown"
        return "tar.gz" if _is_tar(head, data, gzipped=True) else "tex.gz"
    if data[:5] == b"%PDF-":
        return "pdf"
    if _is_tar(data[:512], data, gzipped=False):
        return "tar"
    return "unknown"


def _is_tar(head: bytes, data: bytes, gzipped: bool) -> bool:
    if head[257:262] == b"ustar":
        return True
    if len(head) < 512:
        return False
    try:  # pre-POSIX tars have no magic: let tarfile check the first header's checksum
        fileobj = gzip.GzipFile(fileobj=io.BytesIO(data)) if gzipped else io.BytesIO(data)
        with tarfile.open(fileobj=fileobj, mode="r:") as tar:
            return tar.next() is not None
    except (tarfile.TarError, OSError, EOFError):
        return False


def _retry_after(response: requests.Response) -> float | None:
    value = response.headers.get("Retry-After")
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        try:
            return max(0.0, parsedate_to_datetime(value).timestamp() - time.time())
        except (TypeError, ValueError):
            return None


def _download(session: requests.Session, url: str, settings: Settings) -> bytes:
    """GET with pacing and retries; raises `_FetchError` with what went wrong last."""
    cfg = settings.arxiv
    problem, wait = "", 0.0
    for attempt in range(cfg.retries + 1):
        if attempt:
            time.sleep(wait)
        _PACER.wait(cfg.delay_s)
        backoff = cfg.backoff_s * 2**attempt
        try:
            with session.get(url, timeout=cfg.timeout_s, stream=True) as response:
                if response.status_code == 200:
                    return _read_capped(response, cfg.max_eprint_bytes)
                problem = f"HTTP {response.status_code}"
                if response.status_code not in _RETRYABLE:
                    raise _FetchError(f"{problem} from {url}")
                wait = max(backoff, _retry_after(response) or 0.0)
        except (requests.ConnectionError, requests.Timeout) as err:
            problem = f"{type(err).__name__}: {err}"
            wait = backoff
    raise _FetchError(f"{problem} from {url} after {cfg.retries + 1} attempts; try again later")


def _read_capped(response: requests.Response, limit: int) -> bytes:
    buffer = bytearray()
    for chunk in response.iter_content(chunk_size=1 << 16):
        buffer += chunk
        if len(buffer) > limit:
            raise _FetchError(f"larger than arxiv.max_eprint_bytes={limit}; raise it to keep it")
    return bytes(buffer)


def _store(data: bytes, archive_dir: Path) -> tuple[str, Path]:
    """Write under `<sha[:2]>/<sha256>` via a temp file in the same folder and os.replace,
    so a crash never leaves a partial file under a final name."""
    sha = hashlib.sha256(data).hexdigest()
    path = archive_dir / sha[:2] / sha
    if path.exists():
        return sha, path
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-")
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return sha, path


def fetch_eprints(
    ids: list[str],
    settings: Settings,
    known: dict[str, RawSource] | None = None,
    meta: dict[str, PaperMeta] | None = None,
    role: str = "paper",
) -> tuple[list[RawSource], list[Quarantine]]:
    """Download each id's e-print once. `known` (earlier RawSources by id) are reused while
    their file exists, so a rerun downloads nothing; `meta` fills titles and categories.
    A PDF is stored like any archive (format=pdf): the cleaner quarantines it."""
    known = known or {}
    meta = meta or {}
    session = requests.Session()
    session.headers["User-Agent"] = settings.arxiv.user_agent
    sources: list[RawSource] = []
    failures: list[Quarantine] = []
    for arxiv_id in dict.fromkeys(strip_version(i) for i in ids):
        previous = known.get(arxiv_id)
        if previous is not None and Path(previous.path).exists():
            sources.append(previous)
            continue
        url = settings.arxiv.eprint_url + arxiv_id
        try:
            data = _download(session, url, settings)
        except _FetchError as err:
            failures.append(Quarantine(arxiv_id, "fetch", "fetch_failed", str(err)))
            continue
        sha, path = _store(data, settings.archive_dir)
        info = meta.get(arxiv_id)
        sources.append(
            RawSource(
                arxiv_id=arxiv_id,
                sha256=sha,
                path=str(path),
                size_bytes=len(data),
                format=detect_format(data),
                title=info.title if info else "",
                categories=" ".join(info.categories) if info else "",
                role=role,
            )
        )
    return sources, failures
