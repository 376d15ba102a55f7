"""Title, authors and abstract come out as plain text whatever wraps them, from wherever the
source puts them (the main file, an `\\input` front-matter file, an `\\import`ed one)."""

from __future__ import annotations

from pathlib import Path

import pytest

from lilo.tasks.clean import latex_to_text
from lilo.tasks.clean.front import front_matter
from lilo.tasks.clean.latex import clean_source
from lilo.tasks.config import Settings

DOC = "\\documentclass{article}\n%s\n\\begin{document}\n\\maketitle\nBody.\n\\end{document}\n"


@pytest.mark.parametrize(
    ("title", "text"),
    [
        (r"\textsf{Deep Kernel Learning}", "Deep Kernel Learning"),
        (r"\texttt{calamanCy}: A Toolkit", "calamanCy: A Toolkit"),
        (r"{\Large\bf Sparse} \mbox{Gaussian} Processes", "Sparse Gaussian Processes"),
        (r"\textbf{\textsc{Lost}} in the \emph{Middle}\thanks{Funded by X.}", "Lost in the Middle"),
        (
            r"%" "\n" r"  Mapping stellar surfaces I:\\ Degeneracies",
            "Mapping stellar surfaces I: Degeneracies",
        ),
        (
            r"\scalebox{0.9}{\href{https://x.org}{X-Net}}: Fast $\gamma$-ray \LaTeX{}",
            "X-Net: Fast γ-ray LaTeX",
        ),
        (r"\MakeUppercase{Stream} \textcolor{blue}{Members}\footnote{v2}", "Stream Members"),
        (r"\texorpdfstring{$\mathcal{O}(n)$}{O(n)} Gaussian processes", "O(n) Gaussian processes"),
    ],
    ids=["textsf", "texttt", "switches", "nested", "newline", "boxes", "case-color", "pdfstring"],
)
def test_titles_come_out_as_plain_text(tmp_path: Path, title: str, text: str) -> None:
    (tmp_path / "ms.tex").write_text(DOC % f"\\title{{{title}}}")
    assert clean_source(tmp_path, Settings().clean).title == text


def test_front_matter_in_input_and_imported_files(tmp_path: Path) -> None:
    """`\\input{front}` from the preamble and `\\import{parts/}{abstract}` whose own `\\input`
    resolves inside `parts/`, as the import package does."""
    (tmp_path / "front.tex").write_text(
        "\\title{\\textsf{Stellar Streams} with MDNs}\n"
        "\\author[0000-0001-2345-6789]{Jane Q.~Doe}\\affiliation{Somewhere}\n"
        "\\author{R.~Roe}\n"
    )
    (tmp_path / "parts").mkdir()
    (tmp_path / "parts" / "abstract.tex").write_text(
        "\\begin{abstract}\n\\input{numbers}\nWe model 50\\% of \\emph{streams}.\n\\end{abstract}\n"
    )
    (tmp_path / "parts" / "numbers.tex").write_text("Streams are long.")
    (tmp_path / "ms.tex").write_text(
        "\\documentclass{aastex631}\n\\input{front}\n\\begin{document}\n"
        "\\import{parts/}{abstract}\n\\section{Intro}\nText.\n\\end{document}\n"
    )
    cleaned = clean_source(tmp_path, Settings().clean)
    assert cleaned.title == "Stellar Streams with MDNs"
    assert cleaned.front.authors == ("Jane Q. Doe", "R. Roe")
    assert cleaned.front.abstract == "Streams are long. We model 50% of streams."
    assert "Streams are long." in cleaned.text


@pytest.mark.parametrize(
    ("authors", "names"),
    [
        (
            r"\author{Alice Smith\thanks{Equal.} \and Bob Jones\\ University}",
            ("Alice Smith", "Bob Jones"),
        ),
        (
            r"\author{Ana Cruz$^{1}$, Ben Lee$^{2}$ and Chen Wu$^{1}$"
            r"\\ $^1$Univ A \\ \texttt{a@b.c}}",
            ("Ana Cruz", "Ben Lee", "Chen Wu"),
        ),
        (
            r"\author{First Author \\ Affiliation \\ \texttt{email} \And Second Author \\ Other}",
            ("First Author", "Second Author"),
        ),
        (
            r"\author{\IEEEauthorblockN{Ada Lovelace}\IEEEauthorblockA{London} \and "
            r"\IEEEauthorblockN{Charles Babbage}}",
            ("Ada Lovelace", "Charles Babbage"),
        ),
        (
            r"\author{Ming Li\inst{1}\orcidID{0000-0001} \and Sara Ortiz\inst{2}}",
            ("Ming Li", "Sara Ortiz"),
        ),
        (
            r"\icmlauthor{Grace Hopper}{yale}\icmlauthor{Alan Turing}{cam}",
            ("Grace Hopper", "Alan Turing"),
        ),
    ],
    ids=["article", "superscripts", "acl", "ieee", "lncs", "icml"],
)
def test_author_shapes(authors: str, names: tuple[str, ...]) -> None:
    assert front_matter(f"{authors}\n\\title{{T}}", {}).authors == names


def test_aa_structured_abstract_and_macros_in_front_matter() -> None:
    source = (
        r"\newcommand{\chempy}{\textit{CHEMPY}}"
        r"\title{Inferring parameters with \chempy}"
        r"\abstract{Galactic abundances matter.}{We infer \chempy{} parameters.}"
        r"{Simulation-based inference.}{It works.}{Done.}\keywords{x}"
    )
    front = front_matter(source, {"chempy": r"\textit{CHEMPY}"})
    assert front.title == "Inferring parameters with CHEMPY"
    assert front.abstract == (
        "Galactic abundances matter. We infer CHEMPY parameters. Simulation-based inference. "
        "It works. Done."
    )


def test_no_front_matter_is_empty_not_an_error() -> None:
    front = front_matter("\\begin{document}Hi\\end{document}", {})
    assert (front.title, front.authors, front.abstract) == ("", (), "")


def test_plain_text_survives_what_the_parser_rejects() -> None:
    assert latex_to_text("Unclosed {brace and \\emph{x") == "Unclosed brace and x"
    assert latex_to_text("No markup at   all") == "No markup at all"
