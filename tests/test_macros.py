"""The paper's own zero-argument macros are expanded in its text, from wherever they are
defined (main file, input files, local packages), boundedly; layout-only commands go."""

from __future__ import annotations

from pathlib import Path

from lilo.tasks.clean._macros import expand_macros, find_macros, remove_layout
from lilo.tasks.clean.latex import clean_source
from lilo.tasks.config import Settings

PREAMBLE = r"""
\newcommand{\method}{RAL-Writer\xspace}
\newcommand*{\dataset}{LongInOutBench}
\newcommand\R{\mathbb{R}}
\newcommand{\eps}[0]{\epsilon}
\renewcommand{\vec}{\mathbf}
\def\etal{et al.}
\providecommand{\method}{NOT THIS ONE}
\DeclareMathOperator*{\argmax}{arg\,max}
\DeclareMathOperator{\Tr}{Tr}
\newcommand{\T}{\ensuremath{\mathrm{T}}}
\newcommand{\github}{\href{https://github.com/x/y}{\texttt{x/y}}}
\newcommand{\score}[1]{S_{#1}}
\newcommand{\opt}[1][2]{#1}
\makeatletter\def\@internal{hidden}\makeatother
\newcommand{\switch}{\iftrue on\fi}
"""


def test_zero_argument_definitions_of_every_kind() -> None:
    macros = find_macros([PREAMBLE])
    assert macros == {
        "method": "RAL-Writer",
        "dataset": "LongInOutBench",
        "R": r"\mathbb{R}",
        "eps": r"\epsilon",
        "vec": r"\mathbf",
        "etal": "et al.",
        "argmax": r"\operatorname*{arg\,max}",
        "Tr": r"\operatorname{Tr}",
        "T": r"\ensuremath{\mathrm{T}}",
        "github": r"\href{https://github.com/x/y}{\texttt{x/y}}",
    }


def test_expansion_in_text_and_math() -> None:
    macros = find_macros([PREAMBLE])
    text = (
        r"We propose \method, evaluated on \dataset{} by Liu \etal; "
        r"$x \in \R^n$, $\argmax_i \Tr(A)$, $A^\T \vec{v}$, $\eps{}x$ and $2\eps$. "
        r"Code: \github. \methodology stays."
    )
    assert expand_macros(text, macros) == (
        r"We propose RAL-Writer, evaluated on LongInOutBench by Liu et al.; "
        r"$x \in \mathbb{R}^n$, $\operatorname*{arg\,max}_i \operatorname{Tr}(A)$, "
        r"$A^{\ensuremath{\mathrm{T}}} \mathbf{v}$, $\epsilon{}x$ and $2\epsilon$. "
        r"Code: \href{https://github.com/x/y}{\texttt{x/y}}. \methodology stays."
    )


def test_nested_macros_resolve_and_bombs_stay_as_written() -> None:
    macros = find_macros(
        [
            r"\newcommand{\full}{\short{} model}\newcommand{\short}{GP}"
            r"\def\loop{\loop x}\def\ping{\pong}\def\pong{\ping}"
            r"\def\a{\b\b\b\b}\def\b{\c\c\c\c}\def\c{\d\d\d\d}\def\d{\e\e\e\e}"
            r"\def\e{\f\f\f\f}\def\f{\g\g\g\g}\def\g{0123456789}"
        ]
    )
    assert macros["full"] == "GP model"
    assert not {"loop", "ping", "pong", "a"} & macros.keys()  # recursive, or past 4,000 chars
    assert macros["c"] == "0123456789" * 256
    text = r"\full: \loop, \ping, \a."
    assert expand_macros(text, macros) == r"GP model: \loop, \ping, \a."


def test_renewcommand_replaces_and_newcommand_keeps_the_first() -> None:
    macros = find_macros(
        [r"\newcommand{\x}{first}\newcommand{\x}{second}", r"\renewcommand{\y}{a}\def\y{b}"]
    )
    assert macros == {"x": "first", "y": "b"}


def test_layout_commands_are_dropped_without_splitting_paragraphs() -> None:
    text = (
        "First sentence \\cite{a}.\n"
        "\\vspace{-2mm} \\setlength{\\tabcolsep}{3pt}\n"
        "Same paragraph \\cite{b}.\\newpage\n"
        "\\begin{table}\\centering\\small\n"
        "\\begin{tabular}{cc} a & b \\end{tabular}\\vskip -0.1in plus 1fil\n"
        "\\end{table}\n"
        "Words\\hspace*{1em}here.\\clearpage\n"
    )
    cleaned, removed = remove_layout(text)
    assert cleaned == (
        "First sentence \\cite{a}.\n"
        "Same paragraph \\cite{b}.\n"
        "\\begin{table}\n"
        "\\begin{tabular}{cc} a & b \\end{tabular}\n"
        "\\end{table}\n"
        "Wordshere.\n"
    )
    assert removed == len(text) - len(cleaned)


def test_macros_from_input_files_and_local_packages_reach_the_body(tmp_path: Path) -> None:
    """Definitions in `\\input{macros}`, in a local `mystyle.sty` and in the main file are
    all expanded; a `\\renewcommand` left in the body is removed, not expanded into."""
    (tmp_path / "macros.tex").write_text("\\newcommand{\\sys}{\\textsc{Lilo}\\xspace}\n")
    (tmp_path / "mystyle.sty").write_text(
        "\\ProvidesPackage{mystyle}\n\\newcommand{\\bx}{\\mathbf{x}}\n"
        "\\newcommand{\\tightlist}{\\setlength{\\itemsep}{0pt}}\n"
    )
    (tmp_path / "sec").mkdir()
    (tmp_path / "sec" / "intro.tex").write_text(
        "\\section{Why \\sys}\n\\sys reads $\\bx$ with \\ours.\n"
        "\\begin{itemize}\\tightlist\n\\item one\n\\end{itemize}\n"
        "\\renewcommand{\\arraystretch}{1.2}\n"
    )
    (tmp_path / "main.tex").write_text(
        "\\documentclass{article}\n\\usepackage{mystyle}\n\\input{macros}\n"
        "\\newcommand{\\ours}{our method}\n\\renewcommand{\\arraystretch}{1.5}\n"
        "\\title{\\sys: Cleaning}\n\\begin{document}\n\\maketitle\n\\input{sec/intro}\n"
        "\\end{document}\n"
    )
    cleaned = clean_source(tmp_path, Settings().clean)
    assert cleaned.title == "Lilo: Cleaning"
    assert cleaned.text == (
        "\\section{Why \\textsc{Lilo}}\n\\textsc{Lilo} reads $\\mathbf{x}$ with our method.\n"
        "\\begin{itemize}\n\\item one\n\\end{itemize}\n"
    )
    assert cleaned.removed["layout"] > 0
