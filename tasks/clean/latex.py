"""Turn a paper's LaTeX source folder into the cleaned text the methods read (docs/design.md §4).

Order matters: comments go first (while inlining, file by file) so that commented-out inputs
are never followed; the paper's zero-argument macros and its front matter are read from the
whole inlined source and its local packages (they usually sit in the preamble); then the
preamble, everything after `\\end{document}`, the bibliography, the appendices, front matter
and macro definitions left in the body are cut, the macros expanded (definitions first, so a
`\\renewcommand` in the body is not expanded into nonsense) and layout-only commands
dropped. Structure markup (sections, equations, tables, lists, emphasis, citations) stays:
the methods read cleaned LaTeX, as in the reference implementation (§7).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from lilo.tasks.clean._inputs import BEGIN_DOCUMENT, END_DOCUMENT, Inliner, find_main
from lilo.tasks.clean._macros import expand_macros, find_macros, remove_layout
from lilo.tasks.clean._tex import (
    cut,
    environment_spans,
    nbytes,
    remove_commands,
    remove_definitions,
)
from lilo.tasks.clean.front import FrontMatter, front_matter
from lilo.tasks.config import CleanSettings

__all__ = ["CLEANER_VERSION", "Cleaned", "clean_source"]

# Bump whenever the cleaned text for the same source can change: it is stored with every paper.
CLEANER_VERSION = "1.2"

# Front matter after `\\begin{document}` and the number of braced arguments each takes.
_FRONT_MATTER = {
    "title": 1,
    "icmltitle": 1,
    "author": 1,
    "icmlauthor": 2,
    "affiliation": 1,
    "altaffiliation": 1,
    "altaffiltext": 2,
    "email": 1,
    "correspondingauthor": 1,
    "shorttitle": 1,
    "shortauthors": 1,
    "titlerunning": 1,
    "authorrunning": 1,
    "institute": 1,
    "date": 1,
    "thanks": 1,
}
# Counter bookkeeping (AASTeX affiliation counters): removed with the macro definitions.
_COUNTERS = {"newcounter": 1, "setcounter": 2, "stepcounter": 1, "addtocounter": 2}
_MAKETITLE = re.compile(r"\\maketitle(?![a-zA-Z@])")
_BIB_COMMANDS = {"bibliography": 1, "bibliographystyle": 1, "nobibliography": 1}
# `[^][]`, not `[^]]`: an unclosed `[` must not make every later one scan to the end.
_PRINTBIBLIOGRAPHY = re.compile(r"\\printbibliography(?![a-zA-Z@])\*?(?:\[[^\][]*\])?")
_APPENDIX = re.compile(r"\\appendix(?![a-zA-Z@])|\\begin\s*\{(?:appendices|appendix)\}")
# `\n\n\n+`, not `\n{3,}`: a literal prefix lets the regex engine skip ahead.
_BLANK_RUN = re.compile(r"\n\n\n+")


@dataclass(frozen=True)
class Cleaned:
    main_file: str  # relative to the source folder, POSIX separators
    title: str
    text: str
    removed: dict[str, int] = field(default_factory=dict)  # bytes removed per kind
    warnings: tuple[str, ...] = ()
    front: FrontMatter = FrontMatter()  # authors and abstract as plain text, on demand


def clean_source(folder: Path, limits: CleanSettings) -> Cleaned:
    """Clean the paper unpacked in `folder`.

    Raises `Quarantined` (`no_main_file`). A file that is not UTF-8 is decoded with a
    fallback named in the warnings. A source whose inputs or macros make more text than
    `clean.max_text_chars` is `too_large`.
    """
    main = find_main(folder, limits.max_text_chars)
    inliner = Inliner(folder, main, limits)
    source = inliner.read(main)
    removed = {"comments": inliner.comment_bytes}
    macros = find_macros([*inliner.packages, source])
    front = front_matter(source, macros, limits.max_text_chars)
    title = front.title
    warnings = list(inliner.warnings)
    if not title:
        warnings.append("no \\title in the source")

    begin = BEGIN_DOCUMENT.search(source)
    start = begin.end() if begin is not None else 0
    removed["preamble"] = nbytes(source[:start])
    body = source[start:]
    end = END_DOCUMENT.search(body)
    removed["after_document"] = nbytes(body[end.start() :]) if end is not None else 0
    body = body[: end.start()] if end is not None else body

    body, removed["bibliography"] = _remove_bibliography(body)
    appendix = _APPENDIX.search(body)
    removed["appendix"] = nbytes(body[appendix.start() :]) if appendix is not None else 0
    body = body[: appendix.start()] if appendix is not None else body
    body, removed["front_matter"] = _remove_front_matter(body)
    body, definition_bytes = remove_definitions(body)
    body, counter_bytes = remove_commands(body, _COUNTERS)
    removed["macro_definitions"] = definition_bytes + counter_bytes
    expanded = expand_macros(body, macros, limits.max_text_chars)
    body, removed["layout"] = remove_layout(expanded)

    # Trailing blanks go line by line: a `[ \t]+$` regex tries every space of the text.
    text = "\n".join([line.rstrip() for line in body.split("\n")])
    text = _BLANK_RUN.sub("\n\n", text).strip() + "\n"
    return Cleaned(
        main_file=main.relative_to(folder).as_posix(),
        title=title,
        text=text,
        removed=removed,
        warnings=tuple(dict.fromkeys(warnings)),
        front=front,
    )


def _remove_bibliography(body: str) -> tuple[str, int]:
    without, command_bytes = remove_commands(body, _BIB_COMMANDS)
    spans: list[tuple[int, int]] = []  # an environment swallows the `\\printbibliography` inside it
    for start, end in sorted(
        [(s, e) for s, _, _, e in environment_spans(without, ("thebibliography",))]
        + [m.span() for m in _PRINTBIBLIOGRAPHY.finditer(without)]
    ):
        if not spans or start >= spans[-1][1]:
            spans.append((start, end))
    cleaned, span_bytes = cut(without, spans)
    return cleaned, command_bytes + span_bytes


def _remove_front_matter(body: str) -> tuple[str, int]:
    """Title, authors and affiliations placed after `\\begin{document}` (AASTeX does)."""
    without, command_bytes = remove_commands(body, _FRONT_MATTER)
    cleaned, title_bytes = cut(without, [m.span() for m in _MAKETITLE.finditer(without)])
    return cleaned, command_bytes + title_bytes
