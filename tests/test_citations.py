from tasks.records import content_id
from tasks.samples.citations import Citation, citation_groups, find_citations

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
