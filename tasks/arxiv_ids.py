"""arXiv identifiers: the two id schemes, and one normal form for both.

New-style ids are `YYMM.NNNN` (2007-2014) or `YYMM.NNNNN` (2015 on); old-style ids are
`archive[.SUBJ]/YYMMNNN` (`astro-ph/9911436`, `math.GT/0309136`). The normal form drops the
version (`2102.00007v2` -> `2102.00007`): a sample is about a paper, not one revision of it.
"""

from __future__ import annotations

import re

__all__ = ["ARXIV_ID", "find_arxiv_id", "normalize_arxiv_id"]

# ASCII only (`(?a:...)`, kept where a pattern is embedded): Unicode digits (`２３０１`) and
# letters that fold to ASCII ones (the Kelvin sign) are no arXiv id.
_NEW = r"(?a:\d{4}\.\d{4,5})"
_OLD = r"(?a:[a-z]+(?:-[a-z]+)*(?:\.[A-Za-z]{2})?/\d{7})"
_VERSION = r"(?a:v\d+)"
# An id with an optional version, as a pattern to embed in larger ones.
ARXIV_ID = rf"(?:{_NEW}|{_OLD}){_VERSION}?"

_WHOLE = re.compile(rf"(?:arxiv:)?\s*({_NEW}|{_OLD}){_VERSION}?", re.IGNORECASE | re.ASCII)
# An id where the text says it is one: `arXiv:2102.00007`, `arXiv preprint 2102.00007`,
# `arxiv.org/abs/...`, `arxiv.org/pdf/...`. A bare number elsewhere is not trusted.
_MENTION = re.compile(
    rf"(?:arxiv(?:\s+preprint)?\s*:?\s*|arxiv\.org/(?:abs|pdf)/)({ARXIV_ID})(?!\d)",
    re.IGNORECASE | re.ASCII,
)


def normalize_arxiv_id(s: str) -> str | None:
    """The versionless id if `s` is exactly one arXiv id (an `arXiv:` prefix allowed)."""
    match = _WHOLE.fullmatch(s.strip())
    if match is None:
        return None
    ident = match.group(1)
    if "/" in ident:
        archive, number = ident.split("/")
        head, _, subject = archive.partition(".")
        return f"{head.lower()}{'.' + subject.upper() if subject else ''}/{number}"
    return ident


def find_arxiv_id(text: str) -> str | None:
    """The first id that `text` marks as an arXiv id (prefix or arxiv.org URL), normalised."""
    match = _MENTION.search(text)
    return normalize_arxiv_id(match.group(1)) if match else None
