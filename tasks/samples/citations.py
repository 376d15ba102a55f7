"""Where a survey cites what: every citing command with its section, subsection, paragraph
and command index, and the co-citation groups that seed samples (docs/design.md §5: papers cited in
the same command, then the same paragraph, then the same subsection are related).

Citations that credit tools, data or funders rather than discuss related work never make
groups: acknowledgement, software and data-availability sections, the AAS `\\software{}`
list, and boilerplate sentences such as showyourwork's "This study was carried out using the
reproducibility software ... \\citep{Luger2021}", which many unrelated papers share.
"""

from __future__ import annotations

import bisect
import itertools
import re
from collections.abc import Callable
from dataclasses import dataclass

from pylatexenc.latex2text import LatexNodes2Text

from lilo.tasks.clean._tex import argument_span
from lilo.tasks.clean.plain import strip_markup
from lilo.tasks.records import CitationGroup, content_id

__all__ = ["Citation", "GROUP_KINDS", "citation_groups", "find_citations"]

GROUP_KINDS = ("command", "paragraph", "subsection")

# natbib, biblatex and their capitalised/starred forms; \nocite cites nothing in the text.
# `[^][]` and `[^{}]`, not `[^]]` and `[^}]`: an unclosed `\cite{` must not make every later
# one scan to the end of the text (quadratic).
_CITE = re.compile(
    r"\\(cite(?:p|t|alp|alt|author|year|yearpar|num)?|Cite(?:p|t|alp|alt|author)?"
    r"|[Pp]arencite|[Tt]extcite|[Aa]utocite|[Ff]ootcite|[Ss]martcite|supercite)"
    r"(?![A-Za-z])\*?\s*(?:\[[^\][]*\]\s*){0,2}\{([^{}]*)\}"
)
_HEADING = re.compile(
    r"\\(chapter|section|subsection|subsubsection|paragraph)(?![A-Za-z])\*?\s*"
    r"(?:\[[^\][]*\]\s*)?(?=\{)"
)
# Sidebars (Annual Reviews' `textbox`, framed boxes) carry their own \section titles: inside
# one, headings name the box; after it, the enclosing section and subsection go on.
_BOX_BEGIN = re.compile(r"\\begin\{(?:textbox|sidebar|marginnote|tcolorbox|mdframed|framed)\}")
_BOX_END = re.compile(r"\\end\{(?:textbox|sidebar|marginnote|tcolorbox|mdframed|framed)\}")
_SOFTWARE = re.compile(r"\\software\s*(?=\{)")
# A sentence that says what the work used or who paid for it, not what it discusses.
_BOILERPLATE = re.compile(
    r"reproducibility software|\bthis (?:study|work|research|paper|manuscript|project) "
    r"(?:was carried out|was prepared|was produced|has made use|made use|makes use"
    r"|(?:was|is) (?:supported|funded))|\bwe (?:thank|are grateful)|\backnowledges? (?:support"
    r"|funding)|\bgrant (?:no\.|number|agreement)",
    re.IGNORECASE,
)
# A sentence ends at . ! or ? followed by white space and a capital or a command.
_SENTENCE_END = re.compile(r"[.!?](?=\s+[A-Z\\])")
_BLANK_LINE = re.compile(r"\n[ \t]*(?:\n[ \t]*)+")
# AAS journals: an acknowledgments environment, or a \acknowledgments macro that runs on.
_ACK_BEGIN = re.compile(r"\\begin\{acknowledg\w*\}|\\acknowledg(?:e)?ments?(?![A-Za-z])")
_ACK_END = re.compile(r"\\end\{acknowledg\w*\}")
# Back matter whose citations credit tools or funders, not related work. Anchored, so that
# a survey section such as "Open-source Gaussian process software" still counts.
_BACK_MATTER = re.compile(
    r"^(acknowledge?ments?|software( and (data|code))?( availability)?|(code|data|code and data)"
    r" availability( statement)?|funding|disclosure statement|author contributions"
    r"|(conflicts? of interest|competing interests)( statement)?)$",
    re.IGNORECASE,
)
_TO_TEXT = LatexNodes2Text()


@dataclass(frozen=True)
class Citation:
    """One key in one citing command. `division` numbers the stretches between section and
    subsection headings; `back_matter` marks acknowledgement-like parts that groups skip."""

    key: str
    command: str
    section: str
    subsection: str
    paragraph: int
    command_index: int
    division: int
    back_matter: bool


def find_citations(text: str) -> list[Citation]:
    """Every key of every citing command in a cleaned survey text, in text order."""
    events: list[tuple[int, str, re.Match[str]]] = [
        *((m.start(), "heading", m) for m in _HEADING.finditer(text)),
        *((m.start(), "break", m) for m in _BLANK_LINE.finditer(text)),
        *((m.start(), "ack", m) for m in _ACK_BEGIN.finditer(text)),
        *((m.start(), "ack_end", m) for m in _ACK_END.finditer(text)),
        *((m.start(), "box", m) for m in _BOX_BEGIN.finditer(text)),
        *((m.start(), "box_end", m) for m in _BOX_END.finditer(text)),
        *((m.start(), "cite", m) for m in _CITE.finditer(text)),
    ]
    credits = _credit_spans(text)
    section = subsection = ""
    paragraph = division = command_index = 0
    divisions = itertools.count(1)  # a fresh number per section, subsection or sidebar
    in_ack = False
    outside_box: list[tuple[str, str, int]] = []
    citations: list[Citation] = []
    for position, event, match in sorted(events, key=lambda e: e[0]):
        if event == "heading":
            level = match.group(1)
            title = _title(_braced(text, match.end()))
            paragraph += 1
            in_ack = False
            if level in ("chapter", "section"):
                section, subsection = title, ""
                division = next(divisions)
            elif level == "subsection":
                subsection = title
                division = next(divisions)
        elif event == "break":
            paragraph += 1
        elif event in ("ack", "ack_end"):
            in_ack = event == "ack"
            paragraph += 1
        elif event == "box":
            outside_box.append((section, subsection, division))
            paragraph += 1
            division = next(divisions)
        elif event == "box_end" and outside_box:
            section, subsection, division = outside_box.pop()
            paragraph += 1
        elif event == "cite":
            back = (
                in_ack
                or any(_BACK_MATTER.match(t) for t in (section, subsection) if t)
                or any(start <= position < end for start, end in credits)
            )
            for key in (k.strip() for k in match.group(2).split(",")):
                if key:
                    citations.append(
                        Citation(
                            key,
                            match.group(1),
                            section,
                            subsection,
                            paragraph,
                            command_index,
                            division,
                            back,
                        )
                    )
            command_index += 1
    return citations


def _credit_spans(text: str) -> list[tuple[int, int]]:
    """Stretches whose citations credit tools or funders: `\\software{...}` lists, and each
    sentence with a boilerplate phrase (bounded by sentence ends and blank lines)."""
    spans = [
        (m.start(), m.end() + len(_braced(text, m.end())) + 2) for m in _SOFTWARE.finditer(text)
    ]
    bounds = sorted(
        {0, len(text)}
        | {m.end() for m in _SENTENCE_END.finditer(text)}
        | {m.start() for m in _BLANK_LINE.finditer(text)}
    )
    for match in _BOILERPLATE.finditer(text):
        i = bisect.bisect_right(bounds, match.start())
        spans.append((bounds[i - 1], bounds[i] if i < len(bounds) else len(text)))
    return spans


def citation_groups(
    citations: list[Citation], key_to_id: dict[str, str], survey_id: str = ""
) -> list[CitationGroup]:
    """Co-citation groups with at least 2 distinct resolved papers: all `command` groups, then
    `paragraph`, then `subsection`, each in text order. `survey_id` only makes ids global."""
    anchors: dict[str, Callable[[Citation], int]] = {
        "command": lambda c: c.command_index,
        "paragraph": lambda c: c.paragraph,
        "subsection": lambda c: c.division,
    }
    counted = [c for c in citations if not c.back_matter]
    groups: list[CitationGroup] = []
    for kind in GROUP_KINDS:
        members: dict[int, list[Citation]] = {}
        for citation in counted:
            members.setdefault(anchors[kind](citation), []).append(citation)
        for anchor, cited in members.items():
            keys = tuple(dict.fromkeys(c.key for c in cited))
            paper_ids = tuple(dict.fromkeys(key_to_id[k] for k in keys if k in key_to_id))
            if len(paper_ids) < 2:
                continue
            group_id = content_id(survey_id, kind, anchor, paper_ids)
            first = cited[0]
            groups.append(
                CitationGroup(group_id, kind, first.section, first.subsection, keys, paper_ids)
            )
    return groups


def _braced(text: str, start: int) -> str:
    """The contents of the brace group opening at `start`, nested braces included; "" when
    it never closes (taking the rest of the text, every unclosed heading cost it all)."""
    span = argument_span(text, start)
    return "" if span is None else text[span[0] : span[1]]


def _title(latex: str) -> str:
    """Plain text of a heading: citations and labels dropped, markup rendered."""
    latex = _CITE.sub("", re.sub(r"\\label\s*\{[^}]*\}", "", latex))
    try:
        text = _TO_TEXT.latex_to_text(latex)
    except RecursionError:  # nested deeper than the parser goes
        text = strip_markup(latex)
    return " ".join(text.split())
