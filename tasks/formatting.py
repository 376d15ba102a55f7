"""Numbers as lilo shows them, and Markdown for Prefect artifacts (the figures are in
tasks/results_report): tables, and every artifact's text made safe to show whatever it quotes."""

from __future__ import annotations

import html
import math
import re
from typing import Any

import pandas as pd

__all__ = ["fixed", "markdown_table", "safe_markdown", "unsigned_zero"]


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


def markdown_table(df: pd.DataFrame) -> str:
    if df.empty:
        return "_(no rows)_"
    cells = df.astype(object).where(df.notna(), "").map(unsigned_zero)
    lines = [
        "| " + " | ".join(map(str, df.columns)) + " |",
        "|" + "---|" * len(df.columns),
        *("| " + " | ".join(map(str, row)) + " |" for row in cells.itertuples(index=False)),
    ]
    return "\n".join(lines)


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
