"""Fetching from arXiv (docs/design.md §3): metadata through the `arxiv` client, e-prints into a
content-addressed store, both over bounded HTTP. Both endpoints are configuration."""

from lilo.tasks.fetch.eprint import detect_format, fetch_eprints
from lilo.tasks.fetch.metadata import PaperMeta, fetch_metadata, search, strip_version

__all__ = [
    "PaperMeta",
    "detect_format",
    "fetch_eprints",
    "fetch_metadata",
    "search",
    "strip_version",
]
