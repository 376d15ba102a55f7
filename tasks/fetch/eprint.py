"""E-print archives from arXiv's `/e-print/<id>` endpoint into a content-addressed store
(docs/design.md §3): polite requests (`_http`), atomic writes, and no second download of what the
store already has."""

from __future__ import annotations

import gzip
import hashlib
import io
import tarfile
import zlib
from pathlib import Path

import httpx2

from lilo.tasks.bounded_http import ReplyRefused
from lilo.tasks.config import ArxivSettings, Settings
from lilo.tasks.fetch._http import FetchError, arxiv_client, check_retryable, polite
from lilo.tasks.fetch.metadata import PaperMeta, strip_version
from lilo.tasks.files import write_atomic
from lilo.tasks.records import Quarantine, RawSource

__all__ = ["detect_format", "fetch_eprints"]


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


def _download(client: httpx2.Client, url: str, cfg: ArxivSettings) -> bytes:
    """The e-print's bytes, fully read (a cut-short body is retried, never kept; one larger
    than `arxiv.max_eprint_bytes` is abandoned while it is read)."""

    def attempt() -> bytes:
        with client.stream("GET", url) as response:
            if check_retryable(response).status_code != 200:
                raise FetchError(f"HTTP {response.status_code} from {url}")
            return response.read()

    return polite(attempt, url, cfg)


def _store(data: bytes, archive_dir: Path) -> tuple[str, Path]:
    """Write under `<sha[:2]>/<sha256>` via a temp file in the same folder and os.replace,
    so a crash never leaves a partial file under a final name."""
    sha = hashlib.sha256(data).hexdigest()
    path = archive_dir / sha[:2] / sha
    if not path.exists():
        write_atomic(path, data)
    return sha, path


def fetch_eprints(
    ids: list[str],
    settings: Settings,
    known: dict[str, RawSource] | None = None,
    meta: dict[str, PaperMeta] | None = None,
    role: str = "paper",
) -> tuple[list[RawSource], list[Quarantine]]:
    """Download each id's e-print once. A versioned id (`2102.00007v2`) fetches that version
    and is stored under the bare id; old-style ids (`astro-ph/9911436`) work as they are.
    `known` (earlier RawSources by id) are reused while their file exists, so a rerun
    downloads nothing; `meta` fills titles and categories. A PDF is stored like any archive
    (format=pdf): the cleaner quarantines it as `no_latex_source`."""
    known = known or {}
    meta = meta or {}
    client = arxiv_client(settings.arxiv, settings.arxiv.max_eprint_bytes, "arxiv.max_eprint_bytes")
    sources: list[RawSource] = []
    failures: list[Quarantine] = []
    wanted = {strip_version(i): i.strip() for i in reversed(ids)}  # the first asked wins
    for arxiv_id in dict.fromkeys(strip_version(i) for i in ids):
        previous = known.get(arxiv_id)
        if previous is not None and Path(previous.path).exists():
            sources.append(previous)
            continue
        url = settings.arxiv.eprint_url + wanted[arxiv_id]
        try:
            data = _download(client, url, settings.arxiv)
        except (FetchError, ReplyRefused) as err:
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
