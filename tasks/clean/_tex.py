"""Small LaTeX text helpers: decoding, brace-balanced arguments, command removal.

Regex and a brace counter are enough here: the cleaner cuts spans out of the source and
keeps the rest verbatim (docs/design.md §4 keeps the markup), so no full parse is needed.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

__all__ = [
    "argument_span",
    "command_spans",
    "cut",
    "decode_tex",
    "environment_spans",
    "nbytes",
    "normalise_newlines",
    "remove_commands",
    "remove_definitions",
]

_BOMS = ((b"\xef\xbb\xbf", "utf-8-sig"), (b"\xff\xfe", "utf-16"), (b"\xfe\xff", "utf-16"))
# Tried in order after a byte-order mark: old sources are often cp1252 or latin-1, and
# latin-1 decodes any byte, so decoding never fails.
_FALLBACKS = ("utf-8", "cp1252", "latin-1")
_DEFINITION = re.compile(
    r"\\(?:(?:re|provide)?newcommand|(?:re)?newenvironment|DeclareMathOperator"
    r"|DeclareRobustCommand)\*?(?![a-zA-Z@])|\\[gex]?def(?![a-zA-Z@])"
)
_CONTROL_SEQUENCE = re.compile(r"\\(?:[A-Za-z@]+|.)")
# `#1#2` or `#1\\end`: short. Unbounded, each `\\def` without a brace would scan to the end.
_DEF_PARAMETERS = re.compile(r"[^{]{0,200}")
# An escape (`\{`, `\\`; a control word's letters delimit nothing) or a delimiter.
_DELIMITERS = {
    "{": re.compile(r"\\[^A-Za-z]|[{}]"),
    "[": re.compile(r"\\[^A-Za-z]|[\[\]]"),
}
# opening delimiter -> (the last text seen, its opening index -> closing index, -1: unclosed)
_PAIRS: dict[str, tuple[str, dict[int, int]]] = {}


def decode_tex(data: bytes) -> tuple[str, str]:
    """(text, encoding): a byte-order mark wins, then UTF-8, then the legacy fallbacks.
    CRLF and CR become LF."""
    encoding = next((name for bom, name in _BOMS if data.startswith(bom)), None)
    for name in (encoding,) if encoding else _FALLBACKS:
        try:
            text = data.decode(name)
        except UnicodeDecodeError:
            continue
        return normalise_newlines(text.removeprefix("\ufeff")), name
    raise AssertionError("latin-1 decodes every byte")


def nbytes(text: str) -> int:
    """UTF-8 size; `isascii` is O(1) in CPython, so ASCII text skips the encoding."""
    return len(text) if text.isascii() else len(text.encode("utf-8"))


def normalise_newlines(text: str) -> str:
    return text.replace("\r\n", "\n").replace("\r", "\n")


def argument_span(text: str, pos: int) -> tuple[int, int] | None:
    """Skip an optional `[...]` then return the span of the braced argument at `pos`
    (without its braces), or None when there is none."""
    pos = _skip_space(text, pos)
    if pos < len(text) and text[pos] == "[":
        close = _matching(text, pos, "[", "]")
        if close is None:
            return None
        pos = _skip_space(text, close + 1)
    if pos >= len(text) or text[pos] != "{":
        return None
    close = _matching(text, pos, "{", "}")
    return None if close is None else (pos + 1, close)


def remove_commands(text: str, arity: Mapping[str, int]) -> tuple[str, int]:
    """Remove each `\\name[opt]{arg}...` for the given names, with its `arity[name]` braced
    arguments; a command missing an argument loses what it has. Returns (text, bytes removed).
    """
    return cut(text, command_spans(text, arity))


def command_spans(text: str, arity: Mapping[str, int]) -> list[tuple[int, int]]:
    """The spans `remove_commands` removes, in order."""
    names = "|".join(sorted(arity))
    pattern = re.compile(rf"\\({names})\*?(?![a-zA-Z@])")
    spans: list[tuple[int, int]] = []
    pos = 0
    for match in pattern.finditer(text):
        if match.start() < pos:
            continue
        pos = match.end()
        for _ in range(arity[match.group(1)]):
            span = argument_span(text, pos)
            if span is None:
                break
            pos = span[1] + 1
        spans.append((match.start(), pos))
    return spans


def remove_definitions(text: str) -> tuple[str, int]:
    """Remove macro and environment definitions (`\\newcommand`, `\\def`, `\\newenvironment`,
    ...) that authors leave in the body: to a reader they are noise. A definition whose
    braces do not close is left in place."""
    spans: list[tuple[int, int]] = []
    pos = 0
    for match in _DEFINITION.finditer(text):
        if match.start() < pos:
            continue
        end = _definition_end(text, match)
        if end is None:
            continue
        spans.append((match.start(), end))
        pos = end
    return cut(text, spans)


def environment_spans(text: str, names: tuple[str, ...]) -> list[tuple[int, int, int, int]]:
    """(start, inner start, inner end, end) of each `\\begin{name} ... \\end{name}` for the
    given names, each begin paired with the first matching end after it, as the regex
    `\\begin{(name)}.*?\\end{\\1}` would. Linear: a name found unclosed once is not looked
    for again (a regex tries the rest of the text from every unclosed begin)."""
    alternatives = "|".join(re.escape(n) for n in names)
    begins = re.compile(rf"\\begin\s*\{{({alternatives})\}}")
    spans: list[tuple[int, int, int, int]] = []
    unclosed: set[str] = set()
    pos = 0
    while (begin := begins.search(text, pos)) is not None:
        name = begin.group(1)
        end = None
        if name not in unclosed:
            end = re.compile(rf"\\end\s*\{{{re.escape(name)}\}}").search(text, begin.end())
        if end is None:
            unclosed.add(name)
            if len(unclosed) == len(set(names)):
                break
            pos = begin.end()
            continue
        spans.append((begin.start(), begin.end(), end.start(), end.end()))
        pos = end.end()
    return spans


def cut(text: str, spans: list[tuple[int, int]]) -> tuple[str, int]:
    """`text` without the given sorted, disjoint spans, and the bytes they held (counted on
    the pieces, not on the whole text: encoding a long non-ASCII text is what costs)."""
    if not spans:
        return text, 0
    out: list[str] = []
    pos = removed = 0
    for start, end in spans:
        out.append(text[pos:start])
        removed += nbytes(text[start:end])
        pos = end
    out.append(text[pos:])
    return "".join(out), removed


def _definition_end(text: str, match: re.Match[str]) -> int | None:
    """Where the definition starting at `match` ends (after its last braced argument)."""
    pos = _skip_space(text, match.end())
    name = _CONTROL_SEQUENCE.match(text, pos)
    if match.group(0).endswith("def"):  # \def\name#1#2{body}
        if name is None:
            return None
        pos = _DEF_PARAMETERS.match(text, name.end()).end()  # type: ignore[union-attr]  # matches ""
        bodies = 1
    else:  # \newcommand{\name}[n][default]{body}, \newenvironment{name}[n]{begin}{end}
        if name is not None:
            pos = name.end()
        else:
            span = argument_span(text, pos)
            if span is None:
                return None
            pos = span[1] + 1
        while (pos := _skip_space(text, pos)) < len(text) and text[pos] == "[":
            close = _matching(text, pos, "[", "]")
            if close is None:
                return None
            pos = close + 1
        bodies = 2 if "environment" in match.group(0) else 1
    for _ in range(bodies):
        span = argument_span(text, pos)
        if span is None:
            return None
        pos = span[1] + 1
    return pos


def _skip_space(text: str, pos: int) -> int:
    while pos < len(text) and text[pos] in " \t\n":
        pos += 1
    return pos


def _matching(text: str, pos: int, opening: str, closing: str) -> int | None:
    """Index of the delimiter closing the one at `pos`; backslash escapes are skipped.

    Looked up in a table of every pair in `text`, built in one pass and kept for the last
    text seen: scanning from each opening instead costs the rest of the text per unclosed
    one, quadratic for a file of `\\author{` repeated."""
    cached = _PAIRS.get(opening)
    if cached is None or cached[0] is not text:
        cached = (text, _pairs(text, opening, closing))
        _PAIRS[opening] = cached
    close = cached[1].get(pos)
    if close is not None:
        return None if close < 0 else close
    return _scan(text, pos, opening, closing)  # `pos` is escaped (`\\{`) where the pass read it


def _pairs(text: str, opening: str, closing: str) -> dict[int, int]:
    pairs: dict[int, int] = {}
    open_at: list[int] = []
    for event in _DELIMITERS[opening].finditer(text):
        char = event.group()
        if char == opening:
            open_at.append(event.start())
            pairs[event.start()] = -1
        elif char == closing and open_at:
            pairs[open_at.pop()] = event.start()
    return pairs


def _scan(text: str, pos: int, opening: str, closing: str) -> int | None:
    """`_matching` by a scan from `pos`: the regex visits only delimiters and escapes."""
    depth = 0
    for event in _DELIMITERS[opening].finditer(text, pos):
        char = event.group()
        if char == opening:
            depth += 1
        elif char == closing:
            depth -= 1
            if depth == 0:
                return event.start()
    return None
