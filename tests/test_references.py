from pathlib import Path

from conftest import SURVEY

from lilo.tasks.samples.references import read_references

ID_FORMS = r"""
@article{ads,
  title = "{Detection of Planetary {T}ransits}",
  archivePrefix = {arXiv},
  eprint = {astro-ph/9911436},
  doi = {10.1086/312457}
}
@online{biblatex, title = {Biblatex Entry}, eprinttype = {arxiv}, eprint = {2102.00007v2}}
@misc{bare, title = {Bare Eprint}, eprint = {1409.5668}}
@misc{doi, title = {Via DOI}, doi = {10.48550/ARXIV.2208.11692}, publisher = {arXiv}}
@article{journal, title = {Via Journal}, journal = {arXiv preprint arXiv:1706.03762}}
@misc{note, title = {Via Note}, note = {arXiv:1810.04805v3}}
@misc{howpub, title = {Via Howpublished}, howpublished = {arXiv preprint 2005.14165}}
@misc{url, title = {Via URL}, url = {https://arxiv.org/abs/2003.01115}}
@misc{pdf, title = {Via PDF URL}, url = {http://arxiv.org/pdf/1512.03385v1.pdf}}
@article{s2, title = {Semantic Scholar}, journal = {ArXiv}, volume = {abs/2106.09685}}
@article{other, title = {Other Archive}, archivePrefix = {ascl}, eprint = {1303.002}}
@article{plain, title = {{Gaussian} Processes}, journal = {ApJ}, volume = {529}}
@article{wiley, title = {Visualization},
  eprint = {https://rss.onlinelibrary.wiley.com/doi/pdf/10.1111/rssa.12378}}
"""


def _survey(tmp_path: Path, main: str, files: dict[str, str]) -> Path:
    tmp_path.mkdir(parents=True, exist_ok=True)
    (tmp_path / "main.tex").write_text(main)
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    return tmp_path


def test_every_id_form_resolves(tmp_path: Path) -> None:
    folder = _survey(tmp_path, r"\bibliography{refs}", {"refs.bib": ID_FORMS})
    refs = {r.key: r for r in read_references(folder, "main.tex")}
    ads = refs["ads"]
    assert (ads.key, ads.title, ads.arxiv_id, ads.how) == (
        "ads",
        "Detection of Planetary Transits",
        "astro-ph/9911436",
        "eprint",
    )
    assert ads.doi == "10.1086/312457"
    expected = {
        "biblatex": ("2102.00007", "eprint"),
        "bare": ("1409.5668", "eprint"),
        "doi": ("2208.11692", "doi"),
        "journal": ("1706.03762", "journal"),
        "note": ("1810.04805", "journal"),
        "howpub": ("2005.14165", "journal"),
        "url": ("2003.01115", "url"),
        "pdf": ("1512.03385", "url"),
        "s2": ("2106.09685", "semantic_scholar"),
        "other": (None, "unresolved"),
        "plain": (None, "unresolved"),
        "wiley": (None, "unresolved"),
    }
    assert {k: (r.arxiv_id, r.how) for k, r in refs.items() if k != "ads"} == expected
    assert refs["plain"].title == "Gaussian Processes"


def test_only_the_bib_files_the_main_file_uses(tmp_path: Path) -> None:
    main = "% \\bibliography{old}\n\\begin{document}\n\\bibliography{used}\n\\end{document}\n"
    folder = _survey(
        tmp_path,
        main,
        {
            "used.bib": "@misc{a, title={A}, eprint={2101.00001}}",
            "old.bib": "@misc{b, title={B}, eprint={2101.00002}}",
        },
    )
    assert [r.key for r in read_references(folder, "main.tex")] == ["a"]


def test_several_files_biblatex_and_subfolders(tmp_path: Path) -> None:
    main = (
        "\\addbibresource[location=local]{extra.bib}\n"
        "\\bibliography{bib/one.bib, two}\n"
        "\\bibliography{../outside}\n"
    )
    folder = _survey(
        tmp_path / "s",
        main,
        {
            "bib/one.bib": "@misc{one, eprint={2101.00001}}",
            "two.bib": "@misc{two, eprint={2101.00002}}",
            "extra.bib": "@misc{extra, eprint={2101.00003}}",
        },
    )
    (tmp_path / "outside.bib").write_text("@misc{outside, eprint={2101.00004}}")
    keys = [r.key for r in read_references(folder, "main.tex")]
    assert keys == ["one", "two", "extra"]


def test_parse_errors_are_recorded_not_fatal(tmp_path: Path) -> None:
    bib = (
        "@misc{good1, title={One}, eprint={2101.00001}}\n"
        '@misc{broken, title={Two}, eprint="2101.00002"\n'
        "@misc{good2, title={Three}, eprint={2101.00003}}\n"
        "@misc{good1, title={Again}, eprint={2101.00009}}\n"
    )
    folder = _survey(tmp_path, r"\bibliography{refs}", {"refs.bib": bib})
    refs = read_references(folder, "main.tex")
    assert [(r.key, r.arxiv_id, r.how) for r in refs] == [
        ("good1", "2101.00001", "eprint"),
        ("broken", None, "parse_error"),
        ("good2", "2101.00003", "eprint"),
        ("good1", None, "duplicate"),
    ]


def test_bbl_when_no_bib_file(tmp_path: Path) -> None:
    bbl = r"""\begin{thebibliography}{3}
\bibitem[Vaswani et al.(2017)]{vaswani} A. Vaswani et al., arXiv:1706.03762v5 (2017).
\bibitem{he}
K. He, \url{https://arxiv.org/abs/1512.03385}.
\bibitem{book} C. Rasmussen, Gaussian Processes for Machine Learning, MIT Press 2006.
\end{thebibliography}
"""
    folder = _survey(tmp_path, r"\bibliography{missing}", {"main.bbl": bbl})
    refs = read_references(folder, "main.tex")
    assert [(r.key, r.arxiv_id, r.how) for r in refs] == [
        ("vaswani", "1706.03762", "bbl"),
        ("he", "1512.03385", "bbl"),
        ("book", None, "unresolved"),
    ]


def test_no_bibliography_at_all(tmp_path: Path) -> None:
    assert read_references(_survey(tmp_path, "no refs", {}), "main.tex") == []


def test_real_survey_resolution_count() -> None:
    """190 entries in bib.bib (one a duplicate key): 134 carry arXiv eprints, one an arXiv
    DOI, one `journal = {arXiv:2003.01115}`."""
    refs = read_references(SURVEY, "ms.tex")
    resolved = [r for r in refs if r.arxiv_id]
    assert len(refs) == 190
    assert len(resolved) == 136
    assert len({r.arxiv_id for r in resolved}) == 136
    assert {r.how for r in resolved} == {"eprint", "doi", "journal"}
