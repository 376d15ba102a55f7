"""Small LaTeX text helpers: comments, brace-balanced arguments, command removal.

Regex and a brace counter are enough here: the cleaner cuts spans out of the source and
keeps the rest verbatim (DESIGN §4 keeps the markup), so no full parse is needed.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

__all__ = [
    "argument_span",
    "decode_tex",
    "nbytes",
    "normalise_newlines",
    "remove_commands",
    "remove_definitions",
    "strip_comments",
]

# A line up to its first unescaped `%`, the comment, and the newline: `\%` is a percent
# sign, `\\%` a line break followed by a comment. Possessive quantifiers: no backtracking.
_COMMENT_LINE = re.compile(r"(?m)^((?:[^%\\\n]++|\\.)*+)%[^\n]*(\n?)")
_COMMENT_ENV = re.compile(r"\\begin\s*\{comment\}.*?\\end\s*\{comment\}", re.S)
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


_BOMS = ((b"\xef\xbb\xbf", "utf-8-sig"), (b"\xff\xfe", "utf-16"), (b"\xfe\xff", "utf-16"))
# Tried in order after a byte-order mark: old sources are often cp1252 or latin-1, and
# latin-1 decodes any byte, so decoding never fails.
_FALLBACKS = ("utf-8", "cp1252", "latin-1")
_DEFINITION = re.compile(
    r"\\(?:(?:re|provide)?newcommand|(?:re)?newenvironment|DeclareMathOperator"
    r"|DeclareRobustCommand)\*?(?![a-zA-Z@])|\\[gex]?def(?![a-zA-Z@])"
)
_CONTROL_SEQUENCE = re.compile(r"\\(?:[A-Za-z@]+|.)")
_DEF_PARAMETERS = re.compile(r"[^{]*")


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
    return len(text.encode("utf-8"))


def normalise_newlines(text: str) -> str:
    return text.replace("\r\n", "\n").replace("\r", "\n")


def strip_comments(text: str) -> tuple[str, int, list[str]]:
    """Remove `%` comments, `comment` environments and `\\iffalse ... \\fi` blocks.

    `%` goes first so that a commented-out `\\iffalse` or `\\begin{comment}` cannot swallow
    live text. A line that held only a comment disappears with its newline, so that it does
    not turn into a paragraph break. Returns (text, bytes removed, warnings).
    """
    cleaned = _COMMENT_LINE.sub(_kept_before_comment, text) if "%" in text else text
    if "comment" in cleaned:
        cleaned = _COMMENT_ENV.sub("", cleaned)
    cleaned, terminated = _strip_iffalse(cleaned)
    warnings = [] if terminated else ["unterminated \\iffalse: left in place"]
    return cleaned, nbytes(text) - nbytes(cleaned), warnings


def _kept_before_comment(match: re.Match[str]) -> str:
    kept = match.group(1).rstrip()
    return kept + match.group(2) if kept.strip() else ""


def _strip_iffalse(text: str) -> tuple[str, bool]:
    """Drop the false branch of every `\\iffalse`, keeping an `\\else` branch if any."""
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
    arguments; a command missing an argument loses what it has."""
    names = "|".join(sorted(arity))
    pattern = re.compile(rf"\\({names})\*?(?![a-zA-Z@])")
    out: list[str] = []
    pos = 0
    for match in pattern.finditer(text):
        if match.start() < pos:
            continue
        out.append(text[pos : match.start()])
        pos = match.end()
        for _ in range(arity[match.group(1)]):
            span = argument_span(text, pos)
            if span is None:
                break
            pos = span[1] + 1
    out.append(text[pos:])
    cleaned = "".join(out)
    return cleaned, nbytes(text) - nbytes(cleaned)


def remove_definitions(text: str) -> tuple[str, int]:
    """Remove macro and environment definitions (`\\newcommand`, `\\def`, `\\newenvironment`,
    ...) that authors leave in the body: to a reader they are noise. A definition whose
    braces do not close is left in place."""
    out: list[str] = []
    pos = 0
    for match in _DEFINITION.finditer(text):
        if match.start() < pos:
            continue
        end = _definition_end(text, match)
        if end is None:
            continue
        out.append(text[pos : match.start()])
        pos = end
    out.append(text[pos:])
    cleaned = "".join(out)
    return cleaned, nbytes(text) - nbytes(cleaned)


def _definition_end(text: str, match: re.Match[str]) -> int | None:
    """Where the definition starting at `match` ends (after its last braced argument)."""
    pos = _skip_space(text, match.end())
    name = _CONTROL_SEQUENCE.match(text, pos)
    if match.group(0).endswith("def"):  # \def\name#1#2{body}
        if name is None:
            return None
        pos = _DEF_PARAMETERS.match(text, name.end()).end()  # type: ignore[union-attr]
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
    """Index of the delimiter closing the one at `pos`; backslash escapes are skipped."""
    depth = 0
    index = pos
    while index < len(text):
        char = text[index]
        if char == "\\":
            index += 2
            continue
        if char == opening:
            depth += 1
        elif char == closing:
            depth -= 1
            if depth == 0:
                return index
        index += 1
    return None
