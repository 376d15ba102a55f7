"""Fetching from arXiv (docs/design.md §3): metadata through the `arxiv` client, e-prints with
`requests` into a content-addressed store; every request bounded in time and size
(tasks/bounded_requests.py). Both endpoints are configuration."""

from lilo.tasks.fetch._http import arxiv_session
from lilo.tasks.fetch.eprint import detect_format, fetch_eprints
from lilo.tasks.fetch.metadata import PaperMeta, fetch_metadata, search, strip_version

__all__ = [
    "PaperMeta",
    "arxiv_session",
    "detect_format",
    "fetch_eprints",
    "fetch_metadata",
    "search",
    "strip_version",
]
