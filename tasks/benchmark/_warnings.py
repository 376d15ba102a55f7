"""What lilo's cleaned-papers suite (tasks/validate.py) finds in a published benchmark's
papers, as per-paper warning kinds: an imported benchmark is someone else's data, so a
finding is recorded with the paper (`dim_papers.warnings`, the `benchmark_warnings` view)
and never drops it."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable

__all__ = ["count_kinds", "warning_kinds"]

# (a phrase of the failed expectation as tasks/validate.py describes it, the kind), first
# match wins: the `text` regexes are told apart by what they look for.
_KINDS = (
    ("title", "missing_title"),
    (":words", "short_text"),
    ("documentclass", "preamble"),
    ("append", "appendix"),
    ("bibliograph", "bibliography"),
    ("document", "begin_document"),
    ("^\\s*%", "comment_lines"),
    ("markup_density", "markup_density"),
    ("content_sha256", "duplicate_text"),
    ("same as", "duplicate_text"),
)


def warning_kinds(detail: str) -> tuple[str, ...]:
    """The kinds in one quarantine detail of the suite ("name args; name args"), each once,
    in the order found; an expectation lilo does not know yet is `other`."""
    kinds: list[str] = []
    for part in detail.split("; "):
        kind = next((k for phrase, k in _KINDS if phrase in part), "other")
        if kind not in kinds:
            kinds.append(kind)
    return tuple(kinds)


def count_kinds(warnings: Iterable[tuple[str, ...]]) -> dict[str, int]:
    """Papers per warning kind, most frequent first."""
    counts = Counter(kind for kinds in warnings for kind in kinds)
    return dict(sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])))
