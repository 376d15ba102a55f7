"""The last way to an arXiv id: search arXiv for an entry's title (docs/design.md §3 metadata
client).

Older bibliographies carry no identifiers at all; their titles still find the paper. A hit
counts only when its title matches the entry's closely (`samples.title_match`, a difflib
ratio over lower-case words), so a survey never cites the wrong paper by accident. Queries go
through the fetch stage's metadata client, paced and retried as arXiv asks. Runs only
where a network source is configured (`arxiv.api_url`) and `samples.title_search` is on; the
first failed request stops the search for the rest of the bibliography instead of retrying
every entry against a network that is not there.

Every search is recorded on its reference (`title_searched_at`, `title_search_error`, failures
in a row in `title_searches`). A later run passes the earlier references as `previous`: an
answer (a match or none) is kept without asking again, and a failed search is tried again
once its backoff (`TITLE_SEARCH`, tasks/backoff.py) has passed: 6 hours after the first
failure, doubling with each one, at most a week apart (nightly runs retry a day's outage
the next night, and a long one weekly).
"""

from __future__ import annotations

import difflib
import logging
import re
from collections.abc import Mapping
from dataclasses import replace
from datetime import UTC, datetime, timedelta

from lilo.tasks.backoff import TITLE_SEARCH
from lilo.tasks.clean import latex_to_text
from lilo.tasks.config import Settings
from lilo.tasks.fetch.metadata import search
from lilo.tasks.samples.references import Reference

__all__ = ["resolve_titles", "retry_due", "title_similarity"]

log = logging.getLogger(__name__)

_WORD = re.compile(r"[a-z0-9]+")
_QUERY_WORDS = 12  # enough to single a paper out; arXiv's query length stays small
_HITS = 5
_SEARCHED = ("title_search", "no_title_match", "title_search_failed")


def resolve_titles(
    references: list[Reference],
    settings: Settings,
    previous: Mapping[str, Reference] | None = None,
    now: datetime | None = None,
) -> list[Reference]:
    """`references` with each unresolved, titled entry looked up by title, in the same order.

    Entries with an id, without a title, or that BibTeX rejected are returned unchanged. An
    entry searched before (`previous`, by cite key, same title) keeps that search's outcome
    unless it failed and `retry_due`; with the search off, earlier outcomes are still kept.
    """
    searching = bool(settings.samples.title_search and settings.arxiv.api_url)
    now = now or datetime.now(UTC).replace(tzinfo=None)
    failed: str | None = None
    resolved: list[Reference] = []
    for ref in references:
        words = [w for w in _words(ref.title) if len(w) > 2]  # `a`, `of` match everything
        if ref.how != "unresolved" or len(words) < 2:
            resolved.append(ref)
            continue
        prior = (previous or {}).get(ref.key)
        if prior is not None and (prior.title != ref.title or prior.how not in _SEARCHED):
            prior = None
        if prior is not None and not (searching and retry_due(prior, now)):
            resolved.append(_carried(ref, prior))
            continue
        if not searching:
            resolved.append(ref)
            continue
        if failed is None:
            try:
                found = _lookup(ref, words, settings)
            except Exception as exc:  # HTTP, connection or feed errors: the search is optional
                failed = f"{type(exc).__name__}: {exc}"
                log.warning("title search stopped (%s): remaining entries stay unresolved", failed)
            else:
                resolved.append(replace(found, title_searches=0, title_searched_at=now))
                continue
        failures = prior.title_searches if prior is not None else 0
        resolved.append(
            replace(
                ref,
                how="title_search_failed",
                title_searches=failures + 1,
                title_searched_at=now,
                title_search_error=failed,
            )
        )
    return resolved


def retry_due(ref: Reference, now: datetime) -> bool:
    """Whether the failed title search of `ref` may be tried again at `now` (naive UTC)."""
    if ref.how != "title_search_failed" or ref.title_searched_at is None:
        return ref.how == "title_search_failed"
    doublings = min(max(ref.title_searches - 1, 0), 8)  # 6 h x 2^8 is past the cap already
    return now >= ref.title_searched_at + timedelta(seconds=TITLE_SEARCH.wait_s(doublings))


def _carried(ref: Reference, prior: Reference) -> Reference:
    """`ref` as read now, with the outcome and record of its earlier search."""
    return replace(
        ref,
        arxiv_id=prior.arxiv_id,
        how=prior.how,
        title_searches=prior.title_searches,
        title_searched_at=prior.title_searched_at,
        title_search_error=prior.title_search_error,
    )


def _lookup(ref: Reference, words: list[str], settings: Settings) -> Reference:
    query = " AND ".join(f"ti:{w}" for w in words[:_QUERY_WORDS])
    best, best_ratio = None, 0.0
    for hit in search(query, _HITS, settings.arxiv):
        ratio = title_similarity(ref.title, hit.title)
        if ratio > best_ratio:
            best, best_ratio = hit, ratio
    if best is not None and best_ratio >= settings.samples.title_match:
        return replace(ref, arxiv_id=best.arxiv_id, how="title_search")
    return replace(ref, how="no_title_match")


def title_similarity(a: str, b: str) -> float:
    """difflib's ratio over the two titles' lower-case words (LaTeX rendered, punctuation off)."""
    return difflib.SequenceMatcher(None, " ".join(_words(a)), " ".join(_words(b))).ratio()


def _words(title: str) -> list[str]:
    return _WORD.findall(latex_to_text(title).lower()) if title else []
