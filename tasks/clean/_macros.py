"""The paper's own zero-argument macros, expanded in its text; layout-only commands dropped.

`\\method` means nothing to a reader of the cleaned text, `RAL-Writer` does. Definitions come
from the whole inlined source and the paper's local packages (`\\newcommand`, `\\newcommand*`,
`\\renewcommand`, `\\providecommand`, `\\def`, `\\DeclareMathOperator`, ...). Expansion is
bounded: bodies are resolved against each other first, at most `_MAX_DEPTH` deep and
`_MAX_BODY` characters long, so a recursive or exploding macro is left as written and the
text takes exactly one regex pass. Bodies that program TeX rather than name something
(`@`, `#`, `\\def`, `\\if...`) are never expanded.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable, Mapping

from lilo.tasks.clean._tex import argument_span, command_spans, cut
from lilo.tasks.clean.errors import Quarantined

__all__ = ["expand_macros", "find_macros", "remove_layout"]

_DEFINE = re.compile(
    r"\\(?:(?:re)?newcommand|providecommand|DeclareRobustCommand|(DeclareMathOperator))"
    r"(\*?)"
    r"\s*(?:\{\s*\\([A-Za-z]+)\s*\}|\\([A-Za-z]+))\s*(?:\[\s*0\s*\]\s*)?(?=\{)"
    r"|\\[gex]?def\s*\\([A-Za-z]+)\s*(?=\{)"
)
_PROGRAMMING = re.compile(
    r"[@#]|\\(?:[gex]?def|let|new[a-z]+|renew[a-z]+|provide[a-z]+|if[a-zA-Z]*|fi|else"
    r"|expandafter|csname|global|catcode|futurelet|afterassignment)(?![a-zA-Z])"
)
# Names whose meaning the cleaner and the citation reader rely on: never replaced.
_STRUCTURE = frozenset(
    "begin end item section subsection subsubsection paragraph chapter part caption label ref "
    "eqref cite citep citet input include appendix bibliography title author maketitle and "
    "par".split()
)
_MAX_DEPTH = 20
_MAX_BODY = 4000
_CONTROL_WORD = re.compile(r"\\([A-Za-z]+)(\{\})?")
_NAME = re.compile(r"\\([A-Za-z]+)")
# `x^\T` takes one token as its superscript: a longer body must be braced to stay one.
_ONE_TOKEN = re.compile(r"\\[A-Za-z]+|\\.|.|\{.*\}", re.S)
_ENDS_IN_CONTROL_WORD = re.compile(r"\\[A-Za-z]+$")
_LAYOUT = {
    **dict.fromkeys(["setlength", "addtolength", "settowidth", "settoheight"], 2),
    **dict.fromkeys(
        "vspace hspace addvspace enlargethispage pagestyle thispagestyle pagenumbering "
        "linespread captionsetup".split(),
        1,
    ),
    **dict.fromkeys(
        "newpage clearpage cleardoublepage pagebreak nopagebreak noindent smallskip medskip "
        "bigskip vfill hfill centering raggedright raggedleft FloatBarrier balance sloppy "
        "fussy tiny scriptsize footnotesize small normalsize large Large LARGE huge Huge".split(),
        0,
    ),
}
# TeX's own skips take a dimension, not a braced argument: `\vskip -2mm plus 1fil`.
_GLUE = r"-?\s*(?:[\d.]+\s*(?:[a-z]{2}|\\[A-Za-z]+)|\\[A-Za-z]+)"
_SKIP = re.compile(rf"\\[vh]skip\s*{_GLUE}(?:\s*(?:plus|minus)\s*(?:[\d.]*\s*fil+l*|{_GLUE}))*")


def find_macros(sources: Iterable[str]) -> dict[str, str]:
    """Zero-argument macro name -> body, from `sources` in loading order. `\\renewcommand`,
    `\\def` and friends replace an earlier definition; `\\newcommand` and `\\providecommand`
    do not (LaTeX refuses or skips the second)."""
    macros: dict[str, str] = {}
    for text in sources:
        if "def" not in text and "command" not in text and "Operator" not in text:
            continue
        for match in _DEFINE.finditer(text):
            operator, star, *names = match.groups()
            name = next(n for n in names if n)
            span = argument_span(text, match.end())
            if span is None or name in _STRUCTURE:
                continue
            body = text[span[0] : span[1]].strip()
            if operator:
                body = f"\\operatorname{star}{{{body}}}"
            if _PROGRAMMING.search(body):
                continue
            keeps_first = match.group(0).startswith(("\\newcommand", "\\providecommand"))
            if keeps_first and name in macros:
                continue
            macros[name] = body.removesuffix("\\xspace").rstrip() if body else body
    return _resolved(macros)


def expand_macros(text: str, macros: Mapping[str, str], max_chars: int | None = None) -> str:
    """`text` with every use of a macro in `macros` replaced by its body, in one pass over a
    pattern of only the names the text uses (compiling hundreds of names costs more than
    the scan). With `max_chars`, a text that would grow past it is `too_large` (a 4 KB body
    used 30,000 times) as soon as it does, before the text is built."""
    used = tuple(sorted(set(_NAME.findall(text)) & macros.keys())) if macros else ()
    if not used:
        return text
    size = len(text)

    def replace(match: re.Match[str]) -> str:
        nonlocal size
        body = _replacement(macros[match.group(1)], match.group(2))
        size += len(body) - len(match.group(0))
        if max_chars is not None and size > max_chars:
            raise Quarantined(
                "too_large",
                f"macro expansion makes the text longer than {max_chars} characters "
                f"(clean.max_text_chars), \\{match.group(1)} among others",
            )
        script = match.start() > 0 and text[match.start() - 1] in "^_"
        return f"{{{body}}}" if script and not _ONE_TOKEN.fullmatch(body) else body

    return _pattern(used).sub(replace, text)


def remove_layout(text: str) -> tuple[str, int]:
    """Drop commands that only place or size things (`\\setlength`, `\\vspace`, `\\newpage`,
    font sizes, `\\vskip 2mm`); returns (text, bytes removed). A line that held only such
    commands goes with its newline: left blank, it would split a paragraph in two."""
    spans = command_spans(text, _LAYOUT)
    if "skip" in text:
        spans = sorted([*spans, *(m.span() for m in _SKIP.finditer(text))])
    return cut(text, _whole_lines(text, spans))


def _whole_lines(text: str, spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """`spans` (sorted), merged where only blanks separate them, each grown to its whole line
    with the newline when nothing else is on that line."""
    merged: list[tuple[int, int]] = []
    for start, end in spans:
        if merged and not text[merged[-1][1] : start].strip(" \t"):
            merged[-1] = (merged[-1][0], max(end, merged[-1][1]))
        else:
            merged.append((start, end))
    grown: list[tuple[int, int]] = []
    for i, (start, end) in enumerate(merged):
        # Merged spans on one line have text between them, so only a span alone on its line
        # grows: each search stops at the neighbouring span (linear on a long line).
        before = merged[i - 1][1] if i else 0
        after = merged[i + 1][0] if i + 1 < len(merged) else len(text)
        newline = text.rfind("\n", before, start)
        line_start = newline + 1 if newline >= 0 or i == 0 else None
        newline = text.find("\n", end, after)
        line_end = newline + 1 if newline >= 0 else len(text) if after == len(text) else None
        if (
            line_start is not None
            and line_end is not None
            and not text[line_start:start].strip()
            and not text[end:line_end].strip()
        ):
            start, end = line_start, line_end
        grown.append((start, end))
    return grown


def _resolved(macros: dict[str, str]) -> dict[str, str]:
    """Bodies with the other macros expanded in them, each resolved once. A macro that
    reaches itself, nests deeper than `_MAX_DEPTH` or grows past `_MAX_BODY` characters
    is dropped (left as written in the text)."""
    done: dict[str, str | None] = {}
    active: list[str] = []

    def resolve(name: str) -> str | None:
        if name in done:
            return done[name]
        if name in active or len(active) >= _MAX_DEPTH:
            return None
        active.append(name)
        failed = False

        def inner(match: re.Match[str]) -> str:
            nonlocal failed
            if match.group(1) not in macros:
                return match.group(0)
            body = resolve(match.group(1))
            failed = failed or body is None
            return match.group(0) if body is None else _replacement(body, match.group(2))

        expanded = _CONTROL_WORD.sub(inner, macros[name])
        active.pop()
        done[name] = None if failed or len(expanded) > _MAX_BODY else expanded
        return done[name]

    return {name: body for name in macros if (body := resolve(name)) is not None}


def _replacement(body: str, braces: str | None) -> str:
    """A `{}` that ends a macro name goes, unless it protects a control word at the body's
    end from the letter that follows (`\\eps{}x` must not become `\\epsilonx`)."""
    return body + "{}" if braces and _ENDS_IN_CONTROL_WORD.search(body) else body


@functools.lru_cache(maxsize=64)
def _pattern(names: tuple[str, ...]) -> re.Pattern[str]:
    return re.compile(rf"\\({'|'.join(names)})(?![A-Za-z@])(\{{\}})?")
