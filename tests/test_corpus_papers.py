"""The cleaner on every real paper in tests/corpus/papers/ (vendored with their licenses):
the main file it must pick, what must be gone, how many words must be left, and the warnings
its build-generated inputs must raise (corpus README, MANIFEST.tsv)."""

from __future__ import annotations

import csv
import re

import pytest
from conftest import CORPUS, PAPERS

from lilo.tasks.clean.latex import Cleaned, clean_source
from lilo.tasks.config import Settings
from lilo.tasks.text import count_words

SHOWYOURWORK = "missing input: showyourwork.tex (from showyourwork.sty)"
GITLINKS = ("missing input: gitlinks.tex", "missing input: tests/tally.tex")


def _outputs(*names: str) -> tuple[str, ...]:
    """showyourwork's `\\variable{output/...}` files, made by its build and absent here."""
    return tuple(f"missing input: output/{n}" for n in names)


# slug: (main file, (min words, max words), has an appendix, expected warnings)
EXPECTED: dict[str, tuple[str, tuple[int, int], bool, tuple[str, ...]]] = {
    "calamancy-tagalog-toolkit": ("report.tex", (2000, 2800), True, ()),
    "celerite-scalable-gp": ("ms.tex", (12000, 17000), True, ("missing input: vc.tex",)),
    "deep-gp-pathologies": ("deep-limits.tex", (7000, 10500), False, ()),
    "gp-automatic-nl-description": ("lloyd.tex", (4000, 6000), False, ()),
    "gp-compositional-kernel-search": ("gpss.tex", (3600, 5400), True, ()),
    "herding-bayesian-quadrature": ("herding-bmc.tex", (4200, 6300), False, ()),
    "llm-stylometry": ("main.tex", (3800, 5800), True, ()),
    "mapping-stellar-surfaces-1": ("ms.tex", (10000, 14500), True, GITLINKS),
    "mapping-stellar-surfaces-2": ("ms.tex", (18000, 27000), True, GITLINKS),
    "mapping-stellar-surfaces-3": ("ms.tex", (17000, 25000), True, (SHOWYOURWORK,)),
    "pzflow-normalizing-flows": ("ms.tex", (7500, 11500), True, (SHOWYOURWORK,)),
    "sbi-chempy": (
        "ms.tex",
        (7200, 10800),
        True,
        (
            SHOWYOURWORK,
            *_outputs("ape_NN.txt", "ape_NN_log.txt", "global_posterior_APE.txt"),
            *_outputs("posterior_APE.txt", "CHEMPY_TNG_sbi.txt"),
        ),
    ),
    "spectral-sirens-gp": (
        "ms.tex",
        (5200, 7800),
        True,
        (
            SHOWYOURWORK,
            *_outputs("nonparh0percent.txt", "Hz_percent.txt", "mostsensitivez.txt"),
            *_outputs("num_found_events.txt", "BPLh0offset.txt", "PLPh0offset.txt"),
            *_outputs("nonparh0offset.txt", "BPL_bias_percent.txt", "PLP_bias_percent.txt"),
            *_outputs("PLPh0percent.txt", "H0_FID.txt", "priors_placeholder.txt"),
        ),
    ),
    "stellar-stream-mdn": (
        "ms.tex",
        (15000, 23000),
        True,
        (
            SHOWYOURWORK,
            *_outputs("mock2/nstream_variable.txt", "mock2/nbackground_variable.txt"),
            *_outputs("mock/isochrone_age_variable.txt", "mock/isochrone_feh_variable.txt"),
            *_outputs("mock2/ncorrect_variable.txt", "mock2/falseident_variable.txt"),
            *_outputs("gd1/ndata_variable.txt", "gd1/control_points.tex"),
            *_outputs("gd1/member_table_select.tex", "gd1/nstream/nstream_variable.txt"),
            *_outputs("gd1/nstream/minimum_membership_probability.txt"),
            *_outputs("gd1/nstream/posterior_percentile.txt", "gd1/nspur/nspur_variable.txt"),
            *_outputs("pal5/ndata_variable.txt", "pal5/control_points.tex"),
            *_outputs("pal5/member_table_select.tex", "mock/nstream_variable.txt"),
            *_outputs("mock/nbackground_variable.txt", "mock/ncorrect_variable.txt"),
        ),
    ),
    "tlunified-ner-tagalog": ("report.tex", (2000, 3200), True, ()),
}

# What a cleaned paper must not contain: preamble, comments, appendix, bibliography, macros.
LEFTOVERS = {
    "preamble": r"\\documentclass|\\usepackage|\\begin\s*\{document\}|\\end\s*\{document\}",
    "comment": r"(?<!\\)(?:\\\\)*%|\\begin\s*\{comment\}|\\iffalse",
    "appendix": r"\\appendix|\\begin\s*\{append",
    "bibliography": r"\\bibliography|thebibliography|\\printbibliography|\\bibitem",
    "macro definition": r"\\(?:re)?newcommand|\\def\\|\\newenvironment",
    "front matter": r"\\maketitle|\\title\{|\\author\{",
}


def _manifest_titles() -> dict[str, str]:
    with (CORPUS / "MANIFEST.tsv").open(newline="") as handle:
        return {row["slug"]: row["title"] for row in csv.DictReader(handle, delimiter="\t")}


def test_every_corpus_paper_has_expectations() -> None:
    assert sorted(p.name for p in PAPERS.iterdir() if p.is_dir()) == sorted(EXPECTED)


@pytest.fixture(scope="module")
def cleaned() -> dict[str, Cleaned]:
    return {slug: clean_source(PAPERS / slug, Settings().clean) for slug in EXPECTED}


@pytest.mark.parametrize("slug", sorted(EXPECTED))
def test_corpus_paper(slug: str, cleaned: dict[str, Cleaned]) -> None:
    main, (low, high), has_appendix, warnings = EXPECTED[slug]
    paper = cleaned[slug]
    assert paper.main_file == main
    for kind, pattern in LEFTOVERS.items():
        found = re.search(pattern, paper.text)
        assert found is None, f"{kind} left: {paper.text[found.start() : found.end() + 60]!r}"
    assert low <= count_words(paper.text) <= high
    assert sorted(paper.warnings) == sorted(warnings)
    assert (paper.removed["appendix"] > 0) == has_appendix
    assert paper.removed["preamble"] > 0 and paper.removed["comments"] > 0
    assert paper.removed["bibliography"] > 0
    assert "\\section" in paper.text and "\r" not in paper.text
    assert paper.title[:20].casefold() == _manifest_titles()[slug][:20].casefold()
