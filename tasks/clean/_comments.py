"""Comments: `%` to the end of the line, `comment` environments and `\\iffalse` blocks (§4).

A `%` is content, not a comment, where TeX reads characters verbatim: `\\url{}`, the address
of `\\href{}{}`, `\\verb|...|` (any delimiter), `\\lstinline`, `\\mintinline` and verbatim-like
environments (arxiv-latex-cleaner keeps these too). Such spans are found first, only in text
that has them, and their `%` hidden from the line scan behind a NUL (never TeX: a file holding
one is refused before it gets here). The line scan itself is one regex substitution.
"""

from __future__ import annotations

import re

from lilo.tasks.clean._tex import cut, environment_spans, nbytes

__all__ = ["remove_environments", "strip_comments"]

# A line up to its first unescaped `%`: `\%` is a percent sign, `\\%` a line break followed
# by a comment. Possessive quantifiers: no backtracking.
_BEFORE_COMMENT = re.compile(r"((?:[^%\\]++|\\.)*+)%")
# The live part of a line: what comes before its first comment.
_LIVE = re.compile(r"(?:[^%\\\n]++|\\.?)*+")
_VERBATIM = re.compile(
    r"\\(?:(url|nolinkurl|href)\s*(?=\{)"
    r"|(verb|lstinline|mintinline)(?![a-zA-Z@])\*?"
    r"|begin\{(verbatim\*?|Verbatim\*?|BVerbatim|LVerbatim|lstlisting|minted|spverbatim)\})"
)
# A braced argument on one line, with one level of nested braces.
_BRACED = re.compile(r"\{(?:[^{}\n]|\{[^{}\n]*\})*\}")
_OPTIONAL = re.compile(r"\s*\[[^\]\n]*\]")
_HIDDEN = "\x00"
# Cheap substring tests before the regex: most files hold none of these.
_VERBATIM_HINTS = (
    "\\url",
    "\\nolinkurl",
    "\\href",
    "\\verb",
    "inline",
    "erbatim",
    "lstlisting",
    "minted",
)
_IFFALSE = re.compile(r"\\iffalse(?![a-zA-Z@])")
_CONDITIONAL = re.compile(r"\\(if[a-zA-Z@]*|else|fi)(?![a-zA-Z@])")
# Package commands that start with "if" but take braced branches and no `\fi`.
_NO_FI = frozenset(
    {
        "ifthenelse",
        "iftoggle",
        "ifbool",
        "ifboolexpr",
        "ifstrequal",
        "ifstrempty",
        "ifdef",
        "ifundef",
        "ifcsdef",
        "ifcsundef",
        "ifdefempty",
        "ifdefstring",
        "ifnumcomp",
        "ifpackageloaded",
        "ifclassloaded",
    }
)


def strip_comments(text: str) -> tuple[str, int, list[str]]:
    """Remove `%` comments, `comment` environments and `\\iffalse ... \\fi` blocks.

    `%` goes first so that a commented-out `\\iffalse` or `\\begin{comment}` cannot swallow
    live text. Returns (text, bytes removed, warnings).
    """
    cleaned = text
    if "%" in text:
        hidden = _hide_verbatim_percents(text)
        cleaned = _strip_percent_comments(hidden)
        if hidden is not text:
            cleaned = cleaned.replace(_HIDDEN, "%")
    if "comment" in cleaned:
        cleaned = remove_environments(cleaned, ("comment",))
    cleaned, terminated = _strip_iffalse(cleaned)
    warnings = [] if terminated else ["unterminated \\iffalse: left in place"]
    return cleaned, nbytes(text) - nbytes(cleaned), warnings


def remove_environments(text: str, names: tuple[str, ...]) -> str:
    """Drop every `\\begin{name} ... \\end{name}` (the comment package's excluded ones)."""
    return cut(text, [(start, end) for start, _, _, end in environment_spans(text, names)])[0]


def _strip_percent_comments(text: str) -> str:
    """Each line cut at its first unescaped `%`; a line that held only a comment goes with
    its newline, so that it does not turn into a paragraph break."""
    lines: list[str] = []
    for line in text.split("\n"):
        if "%" in line and (comment := _BEFORE_COMMENT.match(line)) is not None:
            line = comment.group(1).rstrip()
            if not line.strip():
                continue
        lines.append(line)
    return "\n".join(lines)


def _hide_verbatim_percents(text: str) -> str:
    """`text` with each `%` inside a live verbatim-like span replaced by NUL; `text` itself
    (the same object) when there is none. One pass: the text is rebuilt once at the end.

    Linear, also on one long line of unclosed spans: each line is scanned for a live `%`
    once, piece by piece between the spans, and every search remembers its answer."""
    if not any(hint in text for hint in _VERBATIM_HINTS):
        return text
    finder = _Finder(text)
    spans: list[tuple[int, int]] = []  # live spans holding a `%`
    covered = 0
    checked = 0  # the line up to here is looked at: `commented` says what was found
    commented = False  # a live `%` begins on the line before `checked`
    for match in _VERBATIM.finditer(text):
        start = match.start()
        if start < covered:
            continue
        newline = text.rfind("\n", checked, start)
        if newline >= 0:
            checked, commented = newline + 1, False
        commented = commented or _comment_in(text, checked, start, spans)
        checked = start
        if commented:
            continue
        end = _span_end(text, match, finder)
        if end is None:
            continue
        covered = end
        if "%" in text[start:end]:
            spans.append((start, end))
    if not spans:
        return text
    pieces: list[str] = []
    pos = 0
    for start, end in spans:
        pieces += [text[pos:start], text[start:end].replace("%", _HIDDEN)]
        pos = end
    pieces.append(text[pos:])
    return "".join(pieces)


def _comment_in(text: str, begin: int, end: int, spans: list[tuple[int, int]]) -> bool:
    """Whether a live `%` comment begins in `text[begin:end]` (`begin` starts a line or a
    verbatim command), not counting the `%`s of the verbatim `spans` found earlier."""
    piece = text[begin:end]
    if "%" not in piece:
        return False
    for span_start, span_end in reversed(spans):
        if span_end <= begin:
            break
        first, last = max(span_start - begin, 0), span_end - begin
        piece = piece[:first] + piece[first:last].replace("%", _HIDDEN) + piece[last:]
    return _LIVE.match(piece).end() < len(piece)  # type: ignore[union-attr]  # matches ""


class _Finder:
    """`text.find(needle, pos)`, remembering each answer: asked again from a later position
    up to that answer, it is the same, so no stretch of text is searched twice for one
    needle (unclosed `\\verb|` or `\\begin{verbatim}` repeated)."""

    def __init__(self, text: str) -> None:
        self._text = text
        self._found: dict[str, tuple[int, int]] = {}

    def find(self, needle: str, pos: int) -> int:
        asked = self._found.get(needle)
        if asked is not None and asked[0] <= pos and (asked[1] < 0 or pos <= asked[1]):
            return asked[1]
        at = self._text.find(needle, pos)
        self._found[needle] = (pos, at)
        return at


def _span_end(text: str, match: re.Match[str], finder: _Finder) -> int | None:
    """Where the verbatim span opened by `match` ends, or None when it does not close."""
    braced, inline, environment = match.groups()
    pos = match.end()
    if environment is not None:
        close = finder.find(f"\\end{{{environment}}}", pos)
        return None if close < 0 else close
    if braced is not None:
        argument = _BRACED.match(text, pos)
        return None if argument is None else argument.end()
    if inline != "verb":  # \lstinline[opts]{code}, \mintinline[opts]{lang}{code}
        if (options := _OPTIONAL.match(text, pos)) is not None:
            pos = options.end()
        if inline == "mintinline":
            language = _BRACED.match(text, pos)
            if language is None:
                return None
            pos = language.end()
        if (argument := _BRACED.match(text, pos)) is not None:
            return argument.end()
    if pos >= len(text) or text[pos] in " \t\n":
        return None
    close = finder.find(text[pos], pos + 1)
    newline = finder.find("\n", pos)
    return None if close < 0 or 0 <= newline < close else close + 1


def _strip_iffalse(text: str) -> tuple[str, bool]:
    """Drop the false branch of every `\\iffalse`, keeping an `\\else` branch if any."""
    if "\\iffalse" not in text:
        return text, True
    out: list[str] = []
    pos = 0
    while (match := _IFFALSE.search(text, pos)) is not None:
        branch = _false_branch(text, match.end())
        if branch is None:
            out.append(text[pos:])
            return "".join(out), False
        else_end, fi_start, fi_end = branch
        out.append(text[pos : match.start()])
        if else_end is not None:
            out.append(_strip_iffalse(text[else_end:fi_start])[0])
        pos = fi_end
    out.append(text[pos:])
    return "".join(out), True


def _false_branch(text: str, start: int) -> tuple[int | None, int, int] | None:
    """(end of `\\else` or None, start of the matching `\\fi`, its end), counting nested ifs."""
    depth = 1
    else_end = None
    for token in _CONDITIONAL.finditer(text, start):
        name = token.group(1)
        if name == "fi":
            depth -= 1
            if depth == 0:
                return else_end, token.start(), token.end()
        elif name == "else":
            if depth == 1 and else_end is None:
                else_end = token.end()
        elif name not in _NO_FI and text[max(0, token.start() - 6) : token.start()] != "\\newif":
            depth += 1
    return None
