"""Survey -> samples (DESIGN §5): a survey's references resolved to arXiv ids, its
co-citation groups, and the triplets built from them."""

from tasks.samples.arxiv_ids import find_arxiv_id, normalize_arxiv_id
from tasks.samples.citations import Citation, CitationGroup, citation_groups, find_citations
from tasks.samples.references import Reference, read_references
from tasks.samples.triplets import build_samples

__all__ = [
    "Citation",
    "CitationGroup",
    "Reference",
    "build_samples",
    "citation_groups",
    "find_arxiv_id",
    "find_citations",
    "normalize_arxiv_id",
    "read_references",
]
