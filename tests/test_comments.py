"""Comment removal keeps `%` where TeX reads it as a character (URLs, verbatim code) and still
drops comments, `comment` environments and `\\iffalse` blocks whole."""

from __future__ import annotations

from pathlib import Path

import pytest

from lilo.tasks.clean._comments import strip_comments
from lilo.tasks.clean.latex import clean_source
from lilo.tasks.config import Settings


def _stripped(text: str) -> str:
    return strip_comments(text)[0]


@pytest.mark.parametrize(
    "line",
    [
        r"Data at \url{https://zenodo.org/record/123%20v2} and more.",
        r"See \url{http://x.org/a%2Fb} or \nolinkurl{x.org/%7Euser}.",
        r"The \href{https://github.com/a/b/blob/main/README.md#L10%20x}{README} explains.",
        r'Call \verb|printf("%d", n)| to print; also \verb+50%+ and \verb*!%s!.',
        r"Inline \lstinline|x = 5 % 3| and \lstinline[language=Python]{y = a % b}.",
        r"Minted \mintinline{python}{z = a % b} inline.",
    ],
    ids=["url", "nolinkurl", "href", "verb", "lstinline", "mintinline"],
)
def test_percent_inside_inline_verbatim_is_content(line: str) -> None:
    text = f"{line} % a real comment\nNext line.\n"
    assert _stripped(text) == f"{line}\nNext line.\n"


@pytest.mark.parametrize("env", ["verbatim", "Verbatim", "lstlisting", "minted", "verbatim*"])
def test_percent_inside_verbatim_environments_is_content(env: str) -> None:
    options = "{python}" if env == "minted" else ""
    block = (
        f"\\begin{{{env}}}{options}\n"
        'printf("%d%%\\n", rate);  % kept: this is code\n'
        "% a full-line shell comment, kept\n"
        f"\\end{{{env}}} % this one goes\n"
    )
    assert _stripped(f"Before % gone\n{block}After\n") == (
        f"Before\n{block.replace(' % this one goes', '')}After\n"
    )


def test_commented_out_url_and_verbatim_stay_comments() -> None:
    text = (
        "Live text\n"
        "% \\url{http://old.org/a%20b} was the old link\n"
        "Kept % \\begin{verbatim} is not opened here\n"
        "% \\verb|x| neither\n"
        "Done 100\\% \\url{https://a.org/%41}% trailing\n"
    )
    assert _stripped(text) == "Live text\nKept\nDone 100\\% \\url{https://a.org/%41}\n"


def test_unclosed_spans_fall_back_to_plain_comment_rules() -> None:
    text = "A \\url{http://broken %oops\nB \\verb|no end % here\n"
    assert _stripped(text) == "A \\url{http://broken\nB \\verb|no end\n"


def test_comment_environments_and_iffalse_still_go_whole() -> None:
    text = (
        "\\begin{comment}\n\\url{a%b} SECRET\n\\end{comment}\n"
        "\\iffalse \\begin{verbatim}%\\end{verbatim} HIDDEN \\fi\n"
        "Shown \\url{x%y}\n"
    )
    cleaned = _stripped(text)
    assert "SECRET" not in cleaned and "HIDDEN" not in cleaned
    assert "Shown \\url{x%y}" in cleaned


def test_excluded_comment_environments_from_the_comment_package(tmp_path: Path) -> None:
    """`\\excludecomment{notes}` in a preamble file makes `notes` a comment environment in
    every input; `\\includecomment{draft}` keeps `draft`."""
    (tmp_path / "preamble.tex").write_text(
        "\\usepackage{comment}\n\\excludecomment{notes}\n\\includecomment{draft}\n"
    )
    (tmp_path / "body.tex").write_text(
        "Body text.\n\\begin{notes}\nREVIEWER_NOTE\n\\end{notes}\n"
        "\\begin{draft}\nDRAFT_KEPT\n\\end{draft}\n"
    )
    (tmp_path / "main.tex").write_text(
        "\\documentclass{article}\n\\input{preamble}\n\\begin{document}\n\\input{body}\n"
        "\\begin{notes}MAIN_NOTE\\end{notes}\n\\end{document}\n"
    )
    text = clean_source(tmp_path, Settings().clean).text
    assert "Body text." in text and "DRAFT_KEPT" in text
    assert "REVIEWER_NOTE" not in text and "MAIN_NOTE" not in text


def test_a_paper_keeps_its_url_and_code_whole(tmp_path: Path) -> None:
    (tmp_path / "ms.tex").write_text(
        "\\documentclass{article}\n\\usepackage{listings,url}\n\\begin{document}\n"
        "Code is at \\url{https://example.org/code%20v1}. % TODO: update\n"
        '\\begin{lstlisting}[language=C]\nprintf("%d", x); // 100%\n\\end{lstlisting}\n'
        "\\end{document}\n"
    )
    cleaned = clean_source(tmp_path, Settings().clean)
    assert "\\url{https://example.org/code%20v1}." in cleaned.text
    assert 'printf("%d", x); // 100%' in cleaned.text
    assert "TODO" not in cleaned.text
