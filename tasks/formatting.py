"""Numbers as lilo shows them, and Prefect artifacts as tasks build them (flows publish them,
flows/_artifacts.py; the figures are in tasks/results_report): Markdown tables, and every
artifact's text made safe to show whatever it quotes."""

from __future__ import annotations

import html
import math
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import pandas as pd

__all__ = [
    "Artifact",
    "artifact_key",
    "fixed",
    "markdown_table",
    "pipe_table",
    "safe_markdown",
    "table_records",
    "unsigned_zero",
]


@dataclass(frozen=True)
class Artifact:
    """A Prefect artifact's content: Markdown, or a table (rows of column -> value)."""

    key: str
    description: str
    markdown: str | None = None
    table: list[dict[str, Any]] | None = None


def artifact_key(*parts: Any) -> str:
    """An artifact key from `parts`: lowercase letters, digits and dashes only."""
    return re.sub(r"[^a-z0-9]+", "-", "-".join(map(str, parts)).lower()).strip("-")


def table_records(df: pd.DataFrame) -> list[dict[str, Any]]:
    """A frame's rows as a table artifact's: JSON-ready dicts, NaN as null."""
    return [
        {str(k): v for k, v in r.items()}
        for r in df.astype(object).where(df.notna(), None).to_dict(orient="records")
    ]


def unsigned_zero(value: Any) -> Any:
    """A float zero as 0.0, never -0.0; anything else as it is."""
    return value + 0.0 if isinstance(value, float) and value == 0.0 else value


def fixed(value: Any, decimals: int = 1, *, sign: bool = False) -> str:
    """`value` with `decimals` decimals, `+` before a positive one with `sign`; "-" for
    None or NaN. Never "-0.0": a value that rounds to zero shows as 0.0 (+0.0)."""
    if value is None or value is pd.NA or (isinstance(value, float) and math.isnan(value)):
        return "-"
    rounded = round(float(value), decimals) + 0.0
    return f"{rounded:+.{decimals}f}" if sign else f"{rounded:.{decimals}f}"


def pipe_table(
    header: Sequence[Any], rows: Iterable[Sequence[Any]], right_from: int | None = None
) -> str:
    """A Markdown pipe table, the one way lilo writes one: the columns from `right_from` on
    right-aligned; a cell's `|` escaped and its line breaks folded, so that no value (a
    survey's title, a reason quoted from a reply) breaks the table."""

    def cell(value: Any) -> str:
        return " ".join(str(value).split("\n")).replace("|", "\\|")

    right = len(header) if right_from is None else right_from
    rule = "|" + "|".join("---" if i < right else "---:" for i in range(len(header))) + "|"
    lines = [
        "| " + " | ".join(map(cell, header)) + " |",
        rule,
        *("| " + " | ".join(map(cell, row)) + " |" for row in rows),
    ]
    return "\n".join(lines)


def markdown_table(df: pd.DataFrame) -> str:
    """A frame as a pipe table (`_(no rows)_` when empty); NaN as an empty cell."""
    if df.empty:
        return "_(no rows)_"
    cells = df.astype(object).where(df.notna(), "").map(unsigned_zero)
    return pipe_table(list(df.columns), cells.itertuples(index=False))


# Where a Markdown link's target starts: an inline link or image `](`, a reference
# definition `[label]:` at the start of a line. `<` before a letter is a tag or an autolink.
_INLINE = re.compile(r"\]\(\s*<?([^)\s>]*)")
_DEFINITION = re.compile(r"^( {0,3})(\[(?:[^\]\\\n]|\\.)+\]:[ \t]*<?([^\s>]*))", re.M)
_TAG = re.compile(r"<(?=[A-Za-z/!?])")
_SCHEME = re.compile(r"^([a-z][a-z0-9+.-]*):")
_WHITESPACE = re.compile(r"[\x00-\x20\x7f]+")


def _safe_target(target: str) -> bool:
    """http(s), an embedded image, or no scheme at all (a path on the same site); the
    target as a browser reads it (entities decoded, spaces and control characters gone)."""
    plain = _WHITESPACE.sub("", html.unescape(target)).lower()
    scheme = _SCHEME.match(plain)
    return scheme is None or scheme.group(1) in ("http", "https") or plain.startswith("data:image/")


def safe_markdown(markdown: str) -> str:
    """`markdown` with every link or image whose target is not http(s), an embedded image or
    a path (`javascript:`, `data:text/html`, `vbscript:`...) shown as text, and every HTML
    tag and autolink (`<...>`) shown as text: what an endpoint's error, a paper's title or a
    run parameter puts in an artifact never becomes a link that runs in the reader's
    browser."""

    def inline(match: re.Match[str]) -> str:
        return match.group(0) if _safe_target(match.group(1)) else "]\\(" + match.group(0)[2:]

    def definition(match: re.Match[str]) -> str:
        safe = _safe_target(match.group(3))
        return match.group(0) if safe else f"{match.group(1)}\\{match.group(2)}"

    markdown = _INLINE.sub(inline, markdown)
    markdown = _DEFINITION.sub(definition, markdown)
    return _TAG.sub("&lt;", markdown)
