"""The arXiv API's shapes for the mirror: query matching and the Atom feed that the `arxiv`
package parses (entry id `http://arxiv.org/abs/<id>v1`, published/updated, authors,
`arxiv:primary_category`, category terms, abs and pdf links, opensearch totals)."""

from __future__ import annotations

import re
from xml.sax.saxutils import escape, quoteattr

from lilo.tasks.synthetic.manifest import ManifestItem

__all__ = ["feed", "matches"]

_TERM_RE = re.compile(r'\b(ANDNOT|AND|OR)\b|(\w+):("[^"]*"|[^\s()]+)|("[^"]*"|[^\s()]+)')


def _fields(item: ManifestItem) -> dict[str, str]:
    text = {
        "ti": item.title,
        "abs": item.abstract,
        "au": " ".join(item.authors),
        "cat": " ".join(item.categories),
        "id": item.arxiv_id,
    }
    text["all"] = " ".join(text.values())
    return {key: value.lower() for key, value in text.items()}


def matches(item: ManifestItem, query: str) -> bool:
    """Loose arXiv query semantics: `field:value` terms (all, ti, abs, au, cat, id), quoted
    phrases, AND/OR/ANDNOT evaluated left to right, bare words as `all:`, case-insensitive
    substring matching. Enough for lilo's survey search; not the real ranking."""
    fields = _fields(item)
    result: bool | None = None
    operator = "AND"
    for op, field, value, bare in _TERM_RE.findall(query):
        if op:
            operator = op
            continue
        needle = (value or bare).strip('"').lower()
        hit = needle in fields.get(field.lower() if field else "all", fields["all"])
        if result is None:
            result = hit
        elif operator == "AND":
            result = result and hit
        elif operator == "OR":
            result = result or hit
        else:
            result = result and not hit
        operator = "AND"
    return bool(result)


def feed(items: list[ManifestItem], total: int, start: int, base_url: str) -> bytes:
    entries = "".join(_entry(item, base_url) for item in items)
    return (
        '<?xml version="1.0" encoding="UTF-8"?>\n'
        '<feed xmlns="http://www.w3.org/2005/Atom" '
        'xmlns:opensearch="http://a9.com/-/spec/opensearch/1.1/" '
        'xmlns:arxiv="http://arxiv.org/schemas/atom">\n'
        f"  <id>{escape(base_url)}/api/query</id>\n"
        "  <title>arXiv Query Results (lilo loopback mirror)</title>\n"
        "  <updated>2026-02-01T00:00:00Z</updated>\n"
        f"  <opensearch:totalResults>{total}</opensearch:totalResults>\n"
        f"  <opensearch:startIndex>{start}</opensearch:startIndex>\n"
        f"  <opensearch:itemsPerPage>{len(items)}</opensearch:itemsPerPage>\n"
        f"{entries}</feed>\n"
    ).encode()


def _entry(item: ManifestItem, base_url: str) -> str:
    authors = "".join(f"    <author><name>{escape(a)}</name></author>\n" for a in item.authors)
    categories = "".join(
        f'    <category term={quoteattr(c)} scheme="http://arxiv.org/schemas/atom"/>\n'
        for c in item.categories
    )
    abs_url = f"http://arxiv.org/abs/{item.arxiv_id}v1"
    pdf_url = f"{base_url}/pdf/{item.arxiv_id}v1"
    return (
        "  <entry>\n"
        f"    <id>{escape(abs_url)}</id>\n"
        f"    <updated>{item.published}</updated>\n"
        f"    <published>{item.published}</published>\n"
        f"    <title>{escape(item.title)}</title>\n"
        f"    <summary>{escape(item.abstract)}</summary>\n"
        f"{authors}"
        f'    <link href={quoteattr(abs_url)} rel="alternate" type="text/html"/>\n'
        f'    <link title="pdf" href={quoteattr(pdf_url)} rel="related" '
        'type="application/pdf"/>\n'
        f"    <arxiv:primary_category term={quoteattr(item.categories[0])} "
        'scheme="http://arxiv.org/schemas/atom"/>\n'
        f"{categories}"
        "  </entry>\n"
    )
