"""Survey -> samples (docs/design.md §5): a survey's references resolved to arXiv ids, its
co-citation groups, the triplets built from them, and the dataset's statistics."""

from lilo.tasks.arxiv_ids import find_arxiv_id, normalize_arxiv_id
from lilo.tasks.samples.bbl import BblEntry, parse_bbl
from lilo.tasks.samples.citations import Citation, citation_groups, find_citations
from lilo.tasks.samples.references import (
    Bibliography,
    Reference,
    read_bibliography,
    read_references,
)
from lilo.tasks.samples.stats import stats_markdown
from lilo.tasks.samples.title_search import resolve_titles, retry_due, title_similarity
from lilo.tasks.samples.triplets import build_samples

__all__ = [
    "BblEntry",
    "Bibliography",
    "Citation",
    "Reference",
    "build_samples",
    "citation_groups",
    "find_arxiv_id",
    "find_citations",
    "normalize_arxiv_id",
    "parse_bbl",
    "read_bibliography",
    "read_references",
    "resolve_titles",
    "retry_due",
    "stats_markdown",
    "title_similarity",
]
