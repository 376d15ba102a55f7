"""The LaTeX cleaner on a synthetic paper with every removable kind, and on real sources
vendored under tests/corpus/."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from conftest import PAPERS

from lilo.tasks.clean.errors import Quarantined
from lilo.tasks.clean.latex import CLEANER_VERSION, clean_source
from lilo.tasks.config import Settings

SETTINGS = Settings()

MAIN = r"""\documentclass{article}
\usepackage{amsmath} % PREAMBLE_COMMENT
\newcommand{\inp}[1]{\input{#1}}
\title{A \emph{Synthetic} Study\thanks{Funded by nobody.}}
\begin{document}
\maketitle
\begin{abstract}
ABSTRACT_TEXT
\end{abstract}
\section{Introduction}
We reach 50\% accuracy % INLINE_SECRET
% FULL_LINE_SECRET \input{secret}
Line break then comment \\% BREAK_SECRET
\input{sections/method}
\include{"sections/results"}
\subfile{tables/table1}
\input{missing_file}
\input{../outside}
\begin{comment}
COMMENT_ENV_SECRET
\end{comment}
\iffalse IFFALSE_SECRET \ifx a b NESTED_SECRET \fi STILL_SECRET \else ELSE_KEPT \fi
\begin{equation} E = mc^2 \label{eq:energy} \end{equation}
\begin{itemize}
\item \emph{first} \cite{ref1}
\end{itemize}




After many blank lines.
\bibliographystyle{plain}
\bibliography{refs}
\begin{thebibliography}{9}
\bibitem{ref1} BIB_SECRET
\end{thebibliography}
\appendix
\section{Proofs}
APPENDIX_SECRET
\end{document}
AFTER_SECRET
"""


def _write(root: Path, files: dict[str, str | bytes]) -> Path:
    for name, content in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content)
    return root


@pytest.fixture
def paper(tmp_path: Path) -> Path:
    (tmp_path / "outside.tex").write_text("OUTSIDE_SECRET")
    return _write(
        tmp_path / "paper",
        {
            "main.tex": MAIN.replace("\n", "\r\n"),
            "secret.tex": "SECRET_INPUT",
            "sections/method.tex": "\\section{Method}\nMETHOD_TEXT\n\\input{sections/method}\n",
            "sections/results.tex": "\\section{Results}\nRESULTS_TEXT % RESULTS_SECRET\n",
            "tables/table1.tex": "\\documentclass[../main.tex]{subfiles}\n\\begin{document}\n"
            "\\begin{table}TABLE_TEXT\\end{table}\n\\end{document}\n",
            "supplement.tex": "\\documentclass{article}\n\\begin{document}\n"
            + "SUPPLEMENT " * 2000
            + "\n\\end{document}\n",
        },
    )


def test_synthetic_paper_is_cleaned(paper: Path) -> None:
    cleaned = clean_source(paper, SETTINGS.clean)
    text = cleaned.text
    assert cleaned.main_file == "main.tex"
    assert cleaned.title == "A Synthetic Study"
    for kept in [
        "ABSTRACT_TEXT",
        "\\section{Introduction}",
        "50\\% accuracy",
        "Line break then comment \\\\",
        "METHOD_TEXT",
        "RESULTS_TEXT",
        "\\begin{table}TABLE_TEXT\\end{table}",
        "ELSE_KEPT",
        "\\begin{equation} E = mc^2",
        "\\item \\emph{first} \\cite{ref1}",
    ]:
        assert kept in text, kept
    for gone in re.findall(r"[A-Z_]+_SECRET|SECRET_INPUT|SUPPLEMENT", MAIN + "SUPPLEMENT"):
        assert gone not in text, gone
    for markup in ["\\documentclass", "\\begin{document}", "\\maketitle", "\\title", "\\appendix"]:
        assert markup not in text, markup
    assert "bibliography" not in text and "\r" not in text and "\n\n\n" not in text
    assert text.count("METHOD_TEXT") == 1


def test_removed_bytes_and_warnings(paper: Path) -> None:
    cleaned = clean_source(paper, SETTINGS.clean)
    for kind in ["comments", "preamble", "appendix", "bibliography", "after_document"]:
        assert cleaned.removed[kind] > 0, kind
    warnings = " | ".join(cleaned.warnings)
    assert "missing input: missing_file.tex" in warnings
    assert "input cycle, skipped: sections/method.tex" in warnings
    assert "outside the archive" in warnings
    assert "#1" not in warnings
    assert CLEANER_VERSION


def test_main_file_without_conventional_name_is_the_largest(tmp_path: Path) -> None:
    doc = "\\documentclass{article}\n\\begin{document}\n%s\n\\end{document}\n"
    folder = _write(
        tmp_path / "p",
        {
            "notes.tex": doc % "short",
            "report.tex": doc % ("long " * 100),
            "part.tex": "\\documentclass[report.tex]{subfiles}\n\\begin{document}\n"
            + "x " * 1000
            + "\n\\end{document}",
            "old.tex": "% \\documentclass{article}\n% \\begin{document}\n" + "y " * 1000,
        },
    )
    assert clean_source(folder, SETTINGS.clean).main_file == "report.tex"


def test_no_main_file(tmp_path: Path) -> None:
    folder = _write(tmp_path / "p", {"macros.tex": "\\newcommand{\\x}{y}"})
    with pytest.raises(Quarantined) as caught:
        clean_source(folder, SETTINGS.clean)
    assert caught.value.reason == "no_main_file"


@pytest.mark.parametrize(
    ("data", "encoding", "kept"),
    [
        ("Caf\xe9 \u201cquoted\u201d".encode("cp1252"), "cp1252", "Caf\xe9 \u201cquoted\u201d"),
        (b"Caf\xe9 \x81", "latin-1", "Caf\xe9 \x81"),
        ("Caf\xe9".encode("utf-16"), "utf-16", "Caf\xe9"),
    ],
    ids=["cp1252", "latin1", "utf16-bom"],
)
def test_not_utf8_is_decoded_with_a_recorded_fallback(
    tmp_path: Path, data: bytes, encoding: str, kept: str
) -> None:
    folder = _write(
        tmp_path / "p",
        {
            "ms.tex": "\\documentclass{article}\n\\begin{document}\n\\input{body}\n\\end{document}",
            "body.tex": data,
        },
    )
    cleaned = clean_source(folder, SETTINGS.clean)
    assert cleaned.text.strip() == kept
    assert f"body.tex: not UTF-8, decoded as {encoding}" in cleaned.warnings


def test_utf8_bom_and_crlf_are_normalised(tmp_path: Path) -> None:
    main = "\\documentclass{article}\r\n\\begin{document}\r\nCaf\xe9\r\n\\end{document}\r\n"
    folder = _write(tmp_path / "p", {"ms.tex": b"\xef\xbb\xbf" + main.encode()})
    cleaned = clean_source(folder, SETTINGS.clean)
    assert cleaned.text == "Caf\xe9\n" and cleaned.warnings == ("no \\title in the source",)


def _assert_clean(text: str) -> None:
    for pattern in [
        r"\\documentclass",
        r"\\begin\{document\}",
        r"\\end\{document\}",
        r"\\appendix",
        r"\\bibliography|thebibliography|\\printbibliography",
        r"(?m)^\s*%",
        r"\\maketitle",
    ]:
        assert not re.search(pattern, text), pattern


def test_celerite_main_file_and_missing_vc() -> None:
    cleaned = clean_source(PAPERS / "celerite-scalable-gp", SETTINGS.clean)
    assert cleaned.main_file == "ms.tex"
    assert "missing input: vc.tex" in cleaned.warnings
    assert cleaned.title.startswith("Fast and scalable Gaussian process modeling")
    assert "\\section{Introduction}" in cleaned.text
    assert "\\begin{equation}" in cleaned.text
    assert cleaned.removed["appendix"] > 0
    _assert_clean(cleaned.text)


def test_calamancy_subfile_tables_are_inlined() -> None:
    cleaned = clean_source(PAPERS / "calamancy-tagalog-toolkit", SETTINGS.clean)
    assert cleaned.main_file == "report.tex"
    assert cleaned.title == "calamanCy: A Tagalog Natural Language Processing Toolkit"
    assert "Juan de la Cruz" in cleaned.text  # from tables/entity_types.tex
    assert "\\begin{table" in cleaned.text
    assert "subfiles" not in cleaned.text
    _assert_clean(cleaned.text)


@pytest.mark.parametrize(
    ("slug", "main"),
    [
        ("gp-compositional-kernel-search", "gpss.tex"),
        ("herding-bayesian-quadrature", "herding-bmc.tex"),
        ("llm-stylometry", "main.tex"),
        ("tlunified-ner-tagalog", "report.tex"),
        ("deep-gp-pathologies", "deep-limits.tex"),
        ("mapping-stellar-surfaces-1", "ms.tex"),
    ],
)
def test_corpus_main_files(slug: str, main: str) -> None:
    cleaned = clean_source(PAPERS / slug, SETTINGS.clean)
    assert cleaned.main_file == main
    assert cleaned.title
    _assert_clean(cleaned.text)


def test_macro_definitions_in_the_body_are_removed(tmp_path: Path) -> None:
    definitions = [
        "\\newcommand{\\wfig}[1][2]{0.3\\columnwidth #1}",
        "\\def\\layersep#1{2.3cm}",
        "\\renewcommand\\tabcolsep{0pt}",
        "\\newenvironment{proofy}[1]{\\begin{proof}}{\\end{proof}}",
        "\\DeclareMathOperator*{\\argmax}{arg\\,max}",
    ]
    body = "".join(f"{d}\n" for d in definitions) + "KEPT \\definecolor{x}{rgb}{1,0,0}\n"
    doc = f"\\documentclass{{article}}\n\\begin{{document}}\n{body}\\end{{document}}\n"
    cleaned = clean_source(_write(tmp_path / "p", {"ms.tex": doc}), SETTINGS.clean)
    assert cleaned.text == "KEPT \\definecolor{x}{rgb}{1,0,0}\n"
    assert cleaned.removed["macro_definitions"] == len("".join(definitions))


def test_appendix_environment_is_cut(tmp_path: Path) -> None:
    doc = (
        "\\documentclass{aa}\n\\begin{document}\n\\section{Intro}\nKEPT\n"
        "\\begin{appendix}\n\\section{Code}\nGONE\n\\end{appendix}\n\\end{document}\n"
    )
    cleaned = clean_source(_write(tmp_path / "p", {"ms.tex": doc}), SETTINGS.clean)
    assert cleaned.text == "\\section{Intro}\nKEPT\n" and cleaned.removed["appendix"] > 0


def test_input_wrappers_and_package_inputs(tmp_path: Path) -> None:
    """showyourwork: `\\variable{output/x.txt}` inputs a generated file; its package inputs a
    generated `showyourwork.tex`. Present files are inlined, absent ones are warnings."""
    folder = _write(
        tmp_path / "p",
        {
            "ms.tex": "\\documentclass{article}\n\\usepackage{amsmath,showyourwork}\n"
            "\\newcommand{\\inp}[1]{\\input{#1}}\n\\begin{document}\n"
            "We found $\\variable{output/n.txt}$ stars in $\\variable{output/gone.txt}$ fields.\n"
            "\\inp{part}\n\\end{document}\n",
            "showyourwork.sty": "\\IfFileExists{./showyourwork.tex}{\\input{showyourwork.tex}}"
            "{\\newcommand\\variable[1]{\\input{##1}}}\n",
            "output/n.txt": "42",
            "part.tex": "PART_TEXT",
        },
    )
    cleaned = clean_source(folder, SETTINGS.clean)
    assert cleaned.text == "We found $42$ stars in $$ fields.\nPART_TEXT\n"
    assert sorted(cleaned.warnings) == [
        "missing input: output/gone.txt",
        "missing input: showyourwork.tex (from showyourwork.sty)",
        "no \\title in the source",
    ]


def test_secondary_documents_lose_to_the_paper(tmp_path: Path) -> None:
    doc = "\\documentclass{article}\n\\begin{document}\n%s\n\\end{document}\n"
    folder = _write(
        tmp_path / "p",
        {
            "paper-v3.tex": doc % ("paper " * 100),
            "supplementary.tex": doc % ("supplement " * 500),
            "cover_letter.tex": doc % ("letter " * 500),
            "icml-workshop-submission.tex": doc % ("workshop " * 500),
        },
    )
    assert clean_source(folder, SETTINGS.clean).main_file == "paper-v3.tex"


@pytest.mark.parametrize(
    ("name", "content"),
    [
        ("00README.json", '{"sources": [{"filename": "b.tex", "usage": "toplevel"}]}'),
        ("00README.XXD", "b.tex toplevelfile\na.tex ignore\n"),
    ],
)
def test_arxiv_readme_names_the_main_file(tmp_path: Path, name: str, content: str) -> None:
    doc = "\\documentclass{article}\n\\begin{document}\n%s\n\\end{document}\n"
    folder = _write(
        tmp_path / "p", {"main.tex": doc % ("a " * 500), "b.tex": doc % "b", name: content}
    )
    assert clean_source(folder, SETTINGS.clean).main_file == "b.tex"


def test_arxiv_readme_cannot_point_outside(tmp_path: Path) -> None:
    (tmp_path / "evil.tex").write_text("\\documentclass{article}\\begin{document}\\end{document}")
    readme = '{"sources": [{"filename": "../evil.tex", "usage": "toplevel"}]}'
    doc = "\\documentclass{article}\n\\begin{document}\nok\n\\end{document}\n"
    folder = _write(tmp_path / "p", {"ms.tex": doc, "00README.json": readme})
    assert clean_source(folder, SETTINGS.clean).main_file == "ms.tex"


def test_utf16_without_bom_is_quarantined_not_guessed(tmp_path: Path) -> None:
    doc = "\\documentclass{article}\n\\begin{document}\nna\u00efve\n\\end{document}\n"
    folder = _write(tmp_path / "p", {"ms.tex": doc.encode("utf-16-le")})
    with pytest.raises(Quarantined) as caught:
        clean_source(folder, SETTINGS.clean)
    assert caught.value.reason == "not_utf8" and caught.value.detail.startswith("ms.tex: NUL")
