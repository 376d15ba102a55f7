"""The last way to an arXiv id: search arXiv for an entry's title (DESIGN §3 metadata client).

Older bibliographies carry no identifiers at all; their titles still find the paper. A hit
counts only when its title matches the entry's closely (`samples.title_match`, a difflib
ratio over lower-case words), so a survey never cites the wrong paper by accident. Queries go
through the fetch stage's metadata client, paced and retried as arXiv asks. Runs only
where a network source is configured (`arxiv.api_url`) and `samples.title_search` is on; the
first failed request stops the search for the rest of the bibliography instead of retrying
every entry against a network that is not there.
"""

from __future__ import annotations

import difflib
import logging
import re
from dataclasses import replace

from pylatexenc.latex2text import LatexNodes2Text

from tasks.config import Settings
from tasks.fetch.metadata import search
from tasks.samples.references import Reference

__all__ = ["resolve_titles", "title_similarity"]

log = logging.getLogger(__name__)

_WORD = re.compile(r"[a-z0-9]+")
_QUERY_WORDS = 12  # enough to single a paper out; arXiv's query length stays small
_HITS = 5
_TO_TEXT = LatexNodes2Text()


def resolve_titles(references: list[Reference], settings: Settings) -> list[Reference]:
    """`references` with each unresolved, titled entry looked up by title, in the same order.

    Entries with an id, without a title, or that BibTeX rejected are returned unchanged.
    """
    if not (settings.samples.title_search and settings.arxiv.api_url):
        return references
    failed: str | None = None
    resolved: list[Reference] = []
    for ref in references:
        words = [w for w in _words(ref.title) if len(w) > 2]  # `a`, `of` match everything
        if ref.how != "unresolved" or len(words) < 2:
            resolved.append(ref)
            continue
        if failed is None:
            try:
                resolved.append(_lookup(ref, words, settings))
                continue
            except Exception as exc:  # HTTP, connection or feed errors: the search is optional
                failed = f"{type(exc).__name__}: {exc}"
                log.warning("title search stopped (%s): remaining entries stay unresolved", failed)
        resolved.append(replace(ref, how="title_search_failed"))
    return resolved


def _lookup(ref: Reference, words: list[str], settings: Settings) -> Reference:
    query = " AND ".join(f"ti:{w}" for w in words[:_QUERY_WORDS])
    best, best_ratio = None, 0.0
    for hit in search(query, _HITS, settings):
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
    return _WORD.findall(_TO_TEXT.latex_to_text(title).lower()) if title else []
