"""The demo survey: one section per topic whose paragraphs cite papers together, the shape
the sample builder reads co-citations from (docs/design.md §5: same command, paragraph,
subsection)."""

from __future__ import annotations

import random
from dataclasses import dataclass

from lilo.tasks.synthetic._prose import ProseWriter
from lilo.tasks.synthetic._topics import Topic

_AND = " \\and "

__all__ = ["Cited", "SURVEY_TITLE", "build_survey"]

SURVEY_TITLE = "Learning from Little Data: A Survey of Kernels, Flows and Low-Resource Tagging"
FURTHER = "Further directions"


@dataclass(frozen=True)
class Cited:
    """What the survey needs to know about an item it cites."""

    arxiv_id: str
    cite_key: str
    name: str  # the method name used in the survey's prose
    title: str
    authors: tuple[str, ...]
    year: int
    primary_category: str


def build_survey(
    rng: random.Random,
    topics: list[tuple[Topic, list[Cited]]],
    further: list[Cited],
    authors: list[str],
    abstract: str,
    together: int = 0,
) -> dict[str, str]:
    """`topics` pairs each topic with its four papers; `further` are the hostile items.
    `together` > 0: the conclusion also cites that many papers (topic by topic) in one
    command, a co-citation group large enough for samples of that many papers."""
    sections = [_topic_section(rng, topic, cited) for topic, cited in topics]
    h = [c.cite_key for c in further]
    sections.append(
        f"\\section{{{FURTHER}}}\n\\label{{sec:further}}\n"
        f"Several recent submissions could not be assessed in full~\\cite{{{h[0]},{h[1]}}}.\n"
        f"Others report promising results on small benchmarks~\\citep{{{h[2]},{h[3]}}}, "
        f"and we expect them to mature quickly.\n"
    )
    names = ", ".join(t.field for t, _ in topics)
    body = "\n".join(sections)
    main = f"""\\documentclass{{article}}
\\usepackage{{natbib}}
\\title{{{SURVEY_TITLE}}}
\\author{{{_AND.join(authors)}}}
\\begin{{document}}
\\maketitle
\\begin{{abstract}}
{abstract}
\\end{{abstract}}

\\section{{Introduction}}
\\label{{sec:intro}}
Many applied problems come with little labelled data and a strong need for calibrated answers.
This survey covers three areas where that tension is acute: {names}.
For each area we group methods that share a central idea and discuss what remains open.

{body}
\\section{{Conclusion}}
\\label{{sec:conclusion}}
Across the three areas, the most successful methods make a strong inductive bias explicit.
We expect future work to combine these biases with better evaluation protocols.
{_cited_together(topics, together)}
\\section*{{Acknowledgements}}
We thank the anonymous reviewers for their comments and the arXiv operators for open access.

\\bibliographystyle{{plainnat}}
\\bibliography{{refs}}
\\end{{document}}
"""
    cited = [c for _, group in topics for c in group] + further
    return {"survey.tex": main, "refs.bib": "\n".join(_bib_entry(c) for c in cited)}


def _cited_together(topics: list[tuple[Topic, list[Cited]]], n: int) -> str:
    if not n:
        return ""
    cited = [c for _, group in topics for c in group][:n]
    names = ", ".join(c.name for c in cited)
    keys = ",".join(c.cite_key for c in cited)
    return f"\nTaken together, {names}~\\cite{{{keys}}} show what such a bias buys.\n"


def _topic_section(rng: random.Random, topic: Topic, cited: list[Cited]) -> str:
    a, b, c, d = cited
    writer = ProseWriter(rng, topic, topic.methods[0], ())
    prose = [writer.sentence("related") for _ in range(6)]
    problem = rng.choice(topic.problems)
    return (
        f"\\section{{{topic.title}}}\n\\label{{sec:{topic.key}}}\n\\subsection{{Approaches}}\n"
        f"{prose[0]}\n{prose[1]}\n"
        f"Recent methods such as {a.name}, {b.name} and {c.name}~\\cite{{{a.cite_key},"
        f"{b.cite_key},{c.cite_key}}} share a focus on {problem}.\n{prose[2]}\n\n"
        f"Both {a.name} and {d.name}~\\citep{{{a.cite_key},{d.cite_key}}} are evaluated on "
        f"{topic.datasets[0][0]} and {topic.datasets[1][0]}.\n"
        f"\\citet{{{b.cite_key}}} take a different route and study {topic.problems[0]}.\n"
        f"{prose[3]}\n\n\\subsection{{Open problems}}\n{prose[4]}\n"
        f"{d.name}~\\cite{{{d.cite_key}}} suggests that {rng.choice(topic.problems)} is far "
        f"from solved.\n{prose[5]}\n"
    )


def _bib_entry(c: Cited) -> str:
    authors = " and ".join(
        f"{name.split()[-1]}, {' '.join(name.split()[:-1])}" for name in c.authors
    )
    return (
        f"@article{{{c.cite_key},\n  title = {{{c.title}}},\n  author = {{{authors}}},\n"
        f"  year = {{{c.year}}},\n  eprint = {{{c.arxiv_id}}},\n  archivePrefix = {{arXiv}},\n"
        f"  primaryClass = {{{c.primary_category}}}\n}}\n"
    )
