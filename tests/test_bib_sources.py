"""Bibliography discovery follows the main file's inputs, finds every resource form, and says
what it looked for when there is nothing to read (`lilo refs` exits 1 then)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from lilo.flows.cli import main
from lilo.tasks.samples.bib_sources import find_bib_sources
from lilo.tasks.samples.references import read_bibliography

BIB_A = "@misc{a1, title={Alpha}, eprint={2101.00001}}\n@misc{a2, title={Beta}}\n"
BIB_B = "@online{b1, title={Gamma}, eprinttype={arxiv}, eprint={2101.00002}}\n"


def _write(root: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    return root


def _keys(folder: Path, main_file: str = "main.tex") -> list[str]:
    return [r.key for r in read_bibliography(folder, main_file).references]


def test_biblatex_preamble_in_an_input_file(tmp_path: Path) -> None:
    """The shape that lost every reference: `\\addbibresource` inside `\\input{preamble}`."""
    folder = _write(
        tmp_path,
        {
            "main.tex": "\\documentclass{article}\n\\input{preamble}\n\\begin{document}\n"
            "\\cite{a1,b1}\n\\printbibliography\n\\end{document}\n",
            "preamble.tex": "\\usepackage[backend=biber]{biblatex}\n"
            "\\addbibresource[label=main]{refs/a.bib}\n\\addbibresource{b}\n",
            "refs/a.bib": BIB_A,
            "b.bib": BIB_B,
        },
    )
    assert _keys(folder) == ["a1", "a2", "b1"]


@pytest.mark.parametrize(
    ("command", "inputs"),
    [
        ("\\include{back}", {"back.tex": "\\bibliography{a,b}"}),
        ("\\subfile{sections/back}", {"sections/back.tex": "\\bibliography{a,b}"}),
        (
            "\\import{chapters/}{back}",
            {"chapters/back.tex": "\\input{bib}", "chapters/bib.tex": "\\bibliography{a,b}"},
        ),
        ("\\subimport*{chapters/}{back}", {"chapters/back.tex": "\\nobibliography{a,b}"}),
        ("\\input{back.tex}", {"back.tex": "\\bibliography{ a.bib , b }"}),
    ],
    ids=["include", "subfile", "import", "subimport", "input"],
)
def test_bibliography_named_in_an_input_file(
    tmp_path: Path, command: str, inputs: dict[str, str]
) -> None:
    main_tex = (
        f"\\documentclass{{article}}\n\\begin{{document}}\nText.\n{command}\n\\end{{document}}"
    )
    folder = _write(tmp_path, {"main.tex": main_tex, "a.bib": BIB_A, "b.bib": BIB_B, **inputs})
    assert _keys(folder) == ["a1", "a2", "b1"]


def test_bib_files_in_sub_folders_and_a_main_file_in_one(tmp_path: Path) -> None:
    """`\\bibliography{refs}` with refs.bib in `bib/` (BibTeX's search path, not the archive,
    found it); a main file in `paper/` names `../shared` which is inside the archive."""
    folder = _write(
        tmp_path,
        {
            "paper/main.tex": "\\documentclass{article}\n\\begin{document}\nx\n"
            "\\bibliography{refs,../shared}\n\\end{document}\n",
            "paper/bib/refs.bib": BIB_A,
            "shared.bib": BIB_B,
        },
    )
    sources = find_bib_sources(folder, "paper/main.tex")
    assert [p.name for p in sources.bib_files] == ["refs.bib", "shared.bib"]
    assert _keys(folder, "paper/main.tex") == ["a1", "a2", "b1"]


def test_remote_resources_and_commented_names_are_skipped(tmp_path: Path) -> None:
    folder = _write(
        tmp_path,
        {
            "main.tex": "\\documentclass{article}\n"
            "\\addbibresource[location=remote]{http://example.org/x.bib}\n"
            "% \\addbibresource{old.bib}\n\\addbibresource{a.bib}\n"
            "\\begin{document}\nx\n\\end{document}\n",
            "a.bib": BIB_A,
            "old.bib": BIB_B,
        },
    )
    assert find_bib_sources(folder, "main.tex").named == ("a.bib",)
    assert _keys(folder) == ["a1", "a2"]


def test_a_missing_bib_falls_back_to_the_compiled_bbl(tmp_path: Path) -> None:
    """`\\bibliography{anthology,custom}` with only custom.bib shipped: the .bbl has both."""
    bbl = (
        "\\begin{thebibliography}{2}\n\\bibitem[A(2020)]{anth} A. Author. 2020.\n"
        "\\newblock An anthology paper.\n\\newblock arXiv:2001.00001.\n"
        "\\bibitem[B(2021)]{cust} B. Author. 2021.\n\\newblock A custom one.\n"
        "\\end{thebibliography}\n"
    )
    folder = _write(
        tmp_path,
        {
            "main.tex": "\\documentclass{article}\n\\begin{document}\nx\n"
            "\\bibliography{anthology,custom}\n\\end{document}\n",
            "custom.bib": "@misc{cust, title={A custom one}}",
            "main.bbl": bbl,
        },
    )
    bibliography = read_bibliography(folder, "main.tex")
    assert [(r.key, r.title, r.arxiv_id) for r in bibliography.references] == [
        ("anth", "An anthology paper", "2001.00001"),
        ("cust", "A custom one", None),
    ]
    assert bibliography.sources.missing == ("anthology.bib",)


def test_thebibliography_written_into_the_source(tmp_path: Path) -> None:
    folder = _write(
        tmp_path,
        {
            "main.tex": "\\documentclass{article}\n\\begin{document}\nx \\cite{k}\n"
            "\\input{refs}\n\\end{document}\n",
            "refs.tex": "\\begin{thebibliography}{1}\n\\bibitem{k}\nK. He.\n"
            "\\newblock Deep residual learning.\n\\newblock \\url{https://arxiv.org/abs/1512.03385}.\n"
            "\\end{thebibliography}\n",
        },
    )
    (ref,) = read_bibliography(folder, "main.tex").references
    assert (ref.key, ref.title, ref.arxiv_id, ref.how) == (
        "k",
        "Deep residual learning",
        "1512.03385",
        "bbl",
    )


DOC = (
    "\\documentclass{article}\n\\begin{document}\n\\section{A}\nText \\cite{a1}.\n"
    "%s\n\\end{document}\n"
)


@pytest.mark.parametrize(
    ("files", "message"),
    [
        ({}, "main.tex (with its inputs) names no bibliography"),
        ({"main.tex": DOC % "\\bibliography{refs,more}"}, "names refs.bib, more.bib, which the"),
        (
            {"main.tex": DOC % "\\bibliography{refs}", "refs.bib": "not bibtex at all"},
            "refs.bib: no entry could be read",
        ),
    ],
    ids=["none-named", "named-missing", "unreadable"],
)
def test_refs_exits_nonzero_and_names_what_it_looked_for(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], files: dict[str, str], message: str
) -> None:
    _write(tmp_path, {"main.tex": DOC % "", **files})
    assert main(["refs", str(tmp_path), "--offline"]) == 1
    out, err = capsys.readouterr()
    assert out == "" and "no bibliography read" in err and message in err
    assert "main.bbl" in err or "refs.bib" in err


def test_refs_prints_sections_and_groups(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    body = "\\section{Flows}\nFlows \\cite{a1,b1} differ.\n\\section{Other}\nSee \\cite{a2}.\n"
    _write(tmp_path, {"main.tex": DOC % (body + "\\bibliography{refs}"), "refs.bib": BIB_A + BIB_B})
    assert main(["refs", str(tmp_path), "--offline"]) == 0
    rows = {r["key"]: r for r in map(json.loads, capsys.readouterr().out.splitlines())}
    assert (rows["a1"]["section"], rows["a1"]["citations"]) == ("A", 2)
    assert rows["b1"]["section"] == "Flows" and rows["b1"]["citation_group"]
    assert rows["a1"]["citation_group"] == rows["b1"]["citation_group"]
    assert rows["a2"]["section"] == "Other" and rows["a2"]["citation_group"] is None
