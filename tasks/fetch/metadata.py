"""Paper metadata through the real `arxiv` client (docs/design.md §3). The endpoint is configuration
(`arxiv.api_url`), so the same code talks to export.arxiv.org or the loopback mirror."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

import arxiv

from lilo.tasks.bounded_http import Bounds
from lilo.tasks.bounded_requests import BoundedSession
from lilo.tasks.config import ArxivSettings
from lilo.tasks.fetch._http import check_retryable, polite

__all__ = ["PaperMeta", "fetch_metadata", "search", "strip_version"]

_VERSION_RE = re.compile(r"v\d+$")


@dataclass(frozen=True)
class PaperMeta:
    arxiv_id: str  # without version: the key every stage joins on
    title: str
    abstract: str
    authors: tuple[str, ...]
    categories: tuple[str, ...]  # primary category first
    published: str  # ISO 8601


def strip_version(arxiv_id: str) -> str:
    """`2601.00001v2` -> `2601.00001`; old-style ids (`astro-ph/9911436v1`) too."""
    return _VERSION_RE.sub("", arxiv_id.strip())


class _PoliteSession(BoundedSession):
    """The `arxiv` client's session, made polite: arXiv asks clients to identify themselves,
    so our User-Agent replaces the client's own; every request is paced and retried like
    e-print downloads (`_http.polite`, `Retry-After` honoured), ends within
    `arxiv.timeout_s` and reads at most `arxiv.max_feed_bytes`."""

    def __init__(self, cfg: ArxivSettings) -> None:
        super().__init__(Bounds(cfg.timeout_s, cfg.max_feed_bytes, "arxiv.max_feed_bytes"))
        self.cfg = cfg

    def request(self, method: str, url: str | bytes, *args: Any, **kwargs: Any) -> Any:
        headers = {
            k: v
            for k, v in (kwargs.pop("headers", None) or {}).items()
            if k.lower() != "user-agent"
        }
        headers["User-Agent"] = self.cfg.user_agent
        kwargs["headers"] = headers
        send = super().request
        return polite(
            lambda: check_retryable(send(method, url, *args, **kwargs)),
            str(url),
            self.cfg,
        )


def _client(cfg: ArxivSettings) -> arxiv.Client:
    client = arxiv.Client(
        page_size=cfg.page_size, delay_seconds=cfg.delay_s, num_retries=cfg.retries
    )
    client.query_url_format = cfg.api_url + "?{}"
    # arxiv 4.x keeps its session private; replacing it is the only way to set the UA and
    # to bound its requests.
    client._session = _PoliteSession(cfg)
    return client


def _meta(result: arxiv.Result) -> PaperMeta:
    categories = [result.primary_category] + [
        c for c in result.categories if c != result.primary_category
    ]
    return PaperMeta(
        arxiv_id=strip_version(result.get_short_id()),
        title=result.title,
        abstract=result.summary.strip(),
        authors=tuple(a.name for a in result.authors),
        categories=tuple(c for c in categories if c),
        published=result.published.isoformat(),
    )


def fetch_metadata(ids: list[str], cfg: ArxivSettings) -> list[PaperMeta]:
    """Metadata for `ids`, in their order; ids arXiv does not know are left out (compare
    the result's ids with yours to find them). Batches of `arxiv.page_size` ids per query."""
    wanted = list(dict.fromkeys(strip_version(i) for i in ids))
    client = _client(cfg)
    found: dict[str, PaperMeta] = {}
    size = cfg.page_size
    for start in range(0, len(wanted), size):
        batch = wanted[start : start + size]
        search_ = arxiv.Search(id_list=batch, max_results=len(batch))
        found.update((m.arxiv_id, m) for m in map(_meta, client.results(search_)))
    return [found[i] for i in wanted if i in found]


def search(query: str, max_results: int, cfg: ArxivSettings) -> list[PaperMeta]:
    """An arXiv query (e.g. `ti:survey AND cat:cs.CL`), for finding surveys to build from."""
    results = _client(cfg).results(arxiv.Search(query=query, max_results=max_results))
    return [_meta(r) for r in results]
