"""LaTeX to plain text for titles, author names, abstracts and bibliography fields.

pylatexenc renders the markup, with its gaps filled: out of the box it drops `\\textsf{X}`,
`\\texttt{X}` and `\\mbox{X}` whole (their argument included) and fails on `\\href`, so a title
wrapped in one came out empty. Footnotes, affiliation marks and spacing go; a formatting
command keeps what it formats; a paper's own unknown macros keep their braced arguments.
"""

from __future__ import annotations

import logging
import re

from pylatexenc.latex2text import LatexNodes2Text, MacroTextSpec
from pylatexenc.latex2text import get_default_latex_context_db as text_context
from pylatexenc.latexwalker import LatexWalker, LatexWalkerError
from pylatexenc.latexwalker import get_default_latex_context_db as walker_context
from pylatexenc.macrospec import MacroSpec

__all__ = ["latex_to_text", "strip_markup"]

log = logging.getLogger(__name__)

# name -> (argument spec, which argument is the text: 0 for none). `[` is optional, `{` braced.
_MACROS: dict[str, tuple[str, int]] = {
    **{
        name: ("{", 1)
        for name in (
            "textsf textsc textrm textnormal textmd textup textsl texttt textit textbf text "
            "mbox hbox fbox mathrm mathsf mathtt mathbf mathit mathcal boldsymbol bm "
            "MakeUppercase MakeLowercase MakeTextUppercase uppercase lowercase smash "
            "underline uline textls IEEEauthorblockN"
        ).split()
    },
    **{
        name: ("{", 0)
        for name in (
            "thanks footnote footnotetext label vspace hspace inst email orcid orcidlink orcidID "
            "IEEEauthorrefmark IEEEauthorblockA affil affiliation altaffiliation "
            "altaffilmark phantom hphantom vphantom textsuperscript"
        ).split()
    },
    **{name: ("", 0) for name in "footnotemark protect xspace newline linebreak".split()},
    "href": ("{{", 2),
    "hyperlink": ("{{", 2),
    "texorpdfstring": ("{{", 2),
    "textcolor": ("[{{", 3),
    "colorbox": ("[{{", 3),
    "scalebox": ("{[{", 3),
    "resizebox": ("{{{", 3),
    "raisebox": ("{[[{", 4),
    "makebox": ("[[{", 3),
    "framebox": ("[[{", 3),
    "parbox": ("[[[{{", 5),
    "url": ("{", 1),
    "nolinkurl": ("{", 1),
    "orcidauthor": ("{{", 2),
}
# Logos, and the name punctuation biblatex's .bbl files spell as macros.
_LITERALS = {
    "LaTeX": "LaTeX",
    "TeX": "TeX",
    "BibTeX": "BibTeX",
    "LaTeXe": "LaTeX2e",
    **dict.fromkeys(
        [*(f"bibnamedelim{c}" for c in "abcdi"), "bibinitdelim"],
        " ",
    ),
    "bibinitperiod": ".",
    "bibinithyphendelim": ".-",
    "bibrangedash": "-",
}
_SPACE = re.compile(r"\s+")
_MARKUP = re.compile(r"[\\{}$~%&^_]")
_CONTROL_OR_MARKUP = re.compile(r"\\[A-Za-z@]+\*?|[{}$~\\]")


def _contexts() -> tuple[object, object]:
    walker, text = walker_context(), text_context()
    walker.add_context_category(
        "lilo",
        prepend=True,
        macros=[
            *(MacroSpec(n, spec) for n, (spec, _) in _MACROS.items()),
            *(MacroSpec(n, "") for n in _LITERALS),
        ],
    )
    text.add_context_category(
        "lilo",
        prepend=True,
        macros=[
            *(
                MacroTextSpec(n, simplify_repl=f"%({keep})s" if keep else "", discard=not keep)
                for n, (_, keep) in _MACROS.items()
            ),
            *(MacroTextSpec(n, simplify_repl=literal) for n, literal in _LITERALS.items()),
        ],
    )
    return walker, text


_WALKER_CONTEXT, _TEXT_CONTEXT = _contexts()
_TO_TEXT = LatexNodes2Text(latex_context=_TEXT_CONTEXT, math_mode="text")


def latex_to_text(latex: str) -> str:
    """One line of plain text. Markup-free input skips the parser (most bibliography
    fields); input the parser rejects loses its markup characters instead."""
    if not _MARKUP.search(latex):
        return _SPACE.sub(" ", latex).strip()
    try:
        nodes = LatexWalker(latex, latex_context=_WALKER_CONTEXT, tolerant_parsing=True)
        text = _TO_TEXT.nodelist_to_text(nodes.get_latex_nodes()[0])
    except (LatexWalkerError, IndexError, ValueError, RecursionError) as exc:
        # The parser recurses per brace: 50,000 nested ones (a hostile .bib) exhaust it.
        level = logging.WARNING if isinstance(exc, RecursionError) else logging.DEBUG
        log.log(level, "plain text fallback for %r: %s", latex[:80], type(exc).__name__)
        text = strip_markup(latex)
    return _SPACE.sub(" ", text).strip()


def strip_markup(latex: str) -> str:
    """`latex` with control words and markup characters made spaces: what is left of text
    no parser can read."""
    return _CONTROL_OR_MARKUP.sub(" ", latex)
