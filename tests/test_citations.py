from pathlib import Path

from conftest import PAPERS, SURVEY

from lilo.tasks.clean.latex import clean_source
from lilo.tasks.config import Settings
from lilo.tasks.records import CitationGroup, content_id
from lilo.tasks.samples.citations import Citation, citation_groups, find_citations
from lilo.tasks.samples.references import read_references

TEXT = r"""Opening words cite \cite{intro}.

\section{Gaussian \emph{Processes} in Astronomy\label{sec:gp}}
Plain \cite{a,b}, natbib \citep[see][p.~3]{c, d}, \citet{e} and \citealp*{f}.
Also \citeauthor{g} \citeyear{h} \Citep{i}.

\subsection[Short]{Kernels \& {Priors}}
Biblatex \parencite[12]{j} \textcite{k} \autocite*{l}; not a key: \nocite{m} \citestyle{x}.

\section{Open-source Gaussian process software}
Tools \citep{n,o}.
\section*{Acknowledgements}
We thank \citet{p} and \cite{q}.
\section{Data Availability}
Data from \cite{r,s}.
\begin{acknowledgments}
Funded \cite{t,u}.
\end{acknowledgments}
\section{Outlook}
After \cite{v}.
"""


def _by_key() -> dict[str, Citation]:
    return {c.key: c for c in find_citations(TEXT)}


def test_every_command_form_and_its_keys() -> None:
    cites = find_citations(TEXT)
    assert [c.key for c in cites] == list("abcdefghijklnopqrstuv")[:0] + [
        "intro",
        *"abcdefghijklnopqrstuv",
    ]
    by_key = _by_key()
    assert by_key["c"].command == "citep" and by_key["f"].command == "citealp"
    assert by_key["i"].command == "Citep" and by_key["l"].command == "autocite"
    assert "m" not in by_key and "x" not in by_key


def test_sections_subsections_paragraphs_and_commands() -> None:
    by_key = _by_key()
    assert (by_key["intro"].section, by_key["intro"].subsection) == ("", "")
    assert by_key["a"].section == "Gaussian Processes in Astronomy"
    assert by_key["j"].subsection == "Kernels & Priors"
    assert by_key["j"].section == "Gaussian Processes in Astronomy"
    assert by_key["n"].subsection == ""
    # one command, one index; one paragraph across lines; a blank line starts the next
    assert by_key["a"].command_index == by_key["b"].command_index
    assert by_key["c"].command_index == by_key["d"].command_index == by_key["a"].command_index + 1
    assert by_key["a"].paragraph == by_key["i"].paragraph
    assert by_key["j"].paragraph > by_key["i"].paragraph
    assert by_key["a"].division == by_key["i"].division != by_key["j"].division
    assert by_key["intro"].paragraph < by_key["a"].paragraph


def test_back_matter_is_flagged() -> None:
    by_key = _by_key()
    flagged = {k for k, c in by_key.items() if c.back_matter}
    assert flagged == set("pqrstu")
    assert by_key["v"].section == "Outlook" and not by_key["v"].back_matter


def test_groups_per_kind_skip_back_matter_and_unresolved() -> None:
    key_to_id = {k: f"id-{k}" for k in "abcdefghijklnopqrstuv"}
    del key_to_id["d"]
    key_to_id["e"] = "id-a"  # two keys for the same paper count once
    groups = citation_groups(find_citations(TEXT), key_to_id, survey_id="s1")
    summary = [(g.kind, g.cite_keys, g.paper_ids) for g in groups]
    assert summary == [
        ("command", ("a", "b"), ("id-a", "id-b")),
        ("command", ("n", "o"), ("id-n", "id-o")),
        ("paragraph", tuple("abcdefghi"), ("id-a", "id-b", "id-c", "id-f", "id-g", "id-h", "id-i")),
        ("paragraph", ("j", "k", "l"), ("id-j", "id-k", "id-l")),
        ("paragraph", ("n", "o"), ("id-n", "id-o")),
        (
            "subsection",
            tuple("abcdefghi"),
            ("id-a", "id-b", "id-c", "id-f", "id-g", "id-h", "id-i"),
        ),
        ("subsection", ("j", "k", "l"), ("id-j", "id-k", "id-l")),
        ("subsection", ("n", "o"), ("id-n", "id-o")),
    ]
    first = groups[0]
    assert first.section == "Gaussian Processes in Astronomy" and first.subsection == ""
    assert first.group_id == content_id("s1", "command", 1, ("id-a", "id-b"))
    assert len({g.group_id for g in groups}) == len(groups)
    assert groups[3].subsection == "Kernels & Priors"


def test_groups_need_two_distinct_papers() -> None:
    cites = find_citations(r"\section{S} \cite{a,b} \cite{a}")
    assert citation_groups(cites, {"a": "1", "b": "1"}) == []
    assert citation_groups(cites, {}) == []


def test_sidebar_headings_do_not_take_over_the_section() -> None:
    text = (
        "\\section{Astronomy}\n\\subsection{Stars}\nBefore \\cite{a}.\n"
        "\\begin{textbox}[ht]\n\\section{Composite GPs}\nBox \\cite{b}.\n\\end{textbox}\n"
        "After \\cite{c}.\n\\subsection{AGN}\nLater \\cite{d}.\n"
    )
    by_key = {c.key: c for c in find_citations(text)}
    assert by_key["b"].section == "Composite GPs"
    assert (by_key["c"].section, by_key["c"].subsection) == ("Astronomy", "Stars")
    assert by_key["a"].division == by_key["c"].division
    assert len({by_key[k].division for k in "abd"}) == 3
    assert by_key["a"].paragraph < by_key["b"].paragraph < by_key["c"].paragraph


def test_credit_sentences_and_software_lists_are_back_matter() -> None:
    text = (
        "\\section{Introduction}\nGPs model stars \\citep{gp1,gp2}. "
        "This study was carried out using the reproducibility software "
        "\\href{https://x}{\\showyourwork} \\citep{syw}, which builds the figures. "
        "Kernels matter \\citep{gp3}.\n\n"
        "We acknowledge that noise varies \\citep{gp4}.\n"
        "\\software{\\texttt{numpy} \\citep{numpy}, \\texttt{jax}}\n"
    )
    flagged = {c.key for c in find_citations(text) if c.back_matter}
    assert flagged == {"syw", "numpy"}


CELERITE, MSS1, MSS2, MSS3 = "1703.09710", "2102.00007", "2102.01697", "2110.06271"


def _groups_of(folder: Path) -> tuple[list[Citation], list[CitationGroup]]:
    """A corpus item read as the pipeline reads a survey (cleaned, bibliography resolved)."""
    cleaned = clean_source(folder, Settings().clean)
    references = read_references(folder, cleaned.main_file)
    citations = find_citations(cleaned.text)
    key_to_id = {r.key: r.arxiv_id for r in references if r.arxiv_id}
    return citations, citation_groups(citations, key_to_id, survey_id=folder.name)


def test_corpus_survey_groups_the_papers_it_discusses_together() -> None:
    """The ARA&A GP review: Mapping Stellar Surfaces I and II share one paragraph on stellar
    light curves (inside the sidebar's section, not the sidebar's title); celerite sits in a
    `\\citep` with the other fast GP solvers in "Scalable GP inference"."""
    citations, groups = _groups_of(SURVEY)
    assert not any(c.back_matter for c in citations)
    ours = [
        (g.kind, g.section, g.subsection, len(g.paper_ids))
        for g in groups
        if {MSS1, MSS2} <= set(g.paper_ids)
    ]
    assert ours == [
        ("paragraph", "GAUSSIAN PROCESSES IN TIME-DOMAIN ASTRONOMY", "Stars and exoplanets", 2),
        ("subsection", "GAUSSIAN PROCESSES IN TIME-DOMAIN ASTRONOMY", "Stars and exoplanets", 49),
    ]
    scalable = [
        g
        for g in groups
        if g.kind == "command"
        and CELERITE in g.paper_ids
        and g.subsection == "Scalable GP inference"
    ]
    assert [len(g.paper_ids) for g in scalable] == [4]
    assert {g.section for g in groups} >= {"GAUSSIAN PROCESS MODELLING DECISIONS"}
    assert not {g.section for g in groups} & {"Composite GPs", "Hyperparameters"}


def test_boilerplate_acknowledgement_citation_groups_nothing() -> None:
    """A showyourwork paper cites Mapping Stellar Surfaces III twice as boilerplate: once in a
    credit sentence in its introduction, once in its `\\software{}` list. Neither citation may
    group MSS III with the unrelated papers cited around it."""
    citations, groups = _groups_of(PAPERS / "spectral-sirens-gp")
    syw = [c for c in citations if c.key == "Luger2021"]
    assert [(c.section, c.back_matter) for c in syw] == [
        ("Introduction", True),
        ("Discussion", True),
    ]
    assert groups and not [g for g in groups if MSS3 in g.paper_ids]
    assert not [g for g in groups if "Luger2021" in g.cite_keys]
