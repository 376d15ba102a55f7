"""A paper's title, authors and abstract as plain text, wherever the source puts them.

They are read from the whole inlined source (front matter often sits in an input file), with
the paper's own zero-argument macros expanded first (`\\title{\\tool: ...}`). The LaTeX is
kept as written and rendered on first use: pylatexenc takes ~10 ms for an abstract, too slow
to pay for every cleaned paper when only the title is always needed.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cached_property

from lilo.tasks.clean._macros import expand_macros
from lilo.tasks.clean._tex import argument_span, environment_spans
from lilo.tasks.clean.plain import latex_to_text

__all__ = ["FrontMatter", "front_matter"]

_TITLE = re.compile(r"\\(?:title|icmltitle)\*?(?![a-zA-Z@])")
_AUTHOR = re.compile(r"\\(?:author|icmlauthor)\*?(?![a-zA-Z@])")
_ABSTRACT_COMMAND = re.compile(r"\\abstract(?![a-zA-Z@])")
# Between two authors of one `\author{}`; a line break ends a name (affiliations follow).
_AND = re.compile(r"\\(?:and|And|AND)(?![a-zA-Z@])")
_LINE_BREAK = re.compile(r"\\\\(?:\s*\[[^\]]*\])?|\\newline(?![a-zA-Z@])")
# Affiliation and footnote marks: `$^{1,2}$`, `$^\dagger$`.
_MARK = re.compile(r"\$\s*\^[^$]*\$")
_NAME_LIST = re.compile(r"\s*,\s*(?:and\s+)?|\s+and\s+")
# A&A's structured abstract: context, aims, methods, results, conclusions.
_ABSTRACT_PARTS = 5


@dataclass(frozen=True)
class FrontMatter:
    """The LaTeX as written (macros expanded); the properties give plain text."""

    title_latex: str = ""
    author_latex: tuple[str, ...] = ()
    abstract_latex: str = ""

    @cached_property
    def title(self) -> str:
        return latex_to_text(self.title_latex)

    @cached_property
    def authors(self) -> tuple[str, ...]:
        """One plain name per author, in order; affiliations, marks and emails dropped."""
        names: list[str] = []
        for latex in self.author_latex:
            for person in _AND.split(latex):
                first_line = _MARK.sub("", _LINE_BREAK.split(person, maxsplit=1)[0])
                names += [n for n in _NAME_LIST.split(latex_to_text(first_line)) if n]
        return tuple(names)

    @cached_property
    def abstract(self) -> str:
        return latex_to_text(self.abstract_latex)


def front_matter(
    source: str, macros: Mapping[str, str], max_chars: int | None = None
) -> FrontMatter:
    """Title, authors and abstract of an inlined `source`; absent parts are empty. Each
    part's macro expansion is bounded by `max_chars` (see `expand_macros`), the authors'
    together."""
    titles = _arguments(source, _TITLE, first_only=True)
    abstracts = environment_spans(source, ("abstract",))
    if abstracts:
        abstract_latex = source[abstracts[0][1] : abstracts[0][2]]
    else:
        abstract_latex = " ".join(_arguments(source, _ABSTRACT_COMMAND, first_only=True))
    authors: list[str] = []
    left = max_chars
    for latex in _arguments(source, _AUTHOR):
        authors.append(expand_macros(latex, macros, left))
        left = None if left is None else left - len(authors[-1])
    return FrontMatter(
        title_latex=expand_macros(titles[0], macros, max_chars) if titles else "",
        author_latex=tuple(authors),
        abstract_latex=expand_macros(abstract_latex.strip(), macros, max_chars),
    )


def _arguments(source: str, command: re.Pattern[str], first_only: bool = False) -> list[str]:
    """The braced argument of each use of `command` (all of a multi-part `\\abstract`), skipping
    uses without one (`\\renewcommand{\\title}...`)."""
    found: list[str] = []
    for match in command.finditer(source):
        span = argument_span(source, match.end())
        if span is None:
            continue
        found.append(source[span[0] : span[1]])
        if command is _ABSTRACT_COMMAND:
            pos = span[1] + 1
            for _ in range(_ABSTRACT_PARTS - 1):
                part = argument_span(source, pos)
                if part is None or source[pos : part[0] - 1].strip():
                    break
                found.append(source[part[0] : part[1]])
                pos = part[1] + 1
        if first_only:
            break
    return found
