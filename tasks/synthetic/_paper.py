"""One synthetic paper as an author would upload it: a main file with a preamble, `\\input`
section files, comments a cleaner must drop, an appendix and a bibliography (docs/design.md §4 lists
what the cleaner meets; this file plants one of each)."""

from __future__ import annotations

import random
from dataclasses import dataclass

from lilo.tasks.synthetic._prose import ProseWriter
from lilo.tasks.synthetic._topics import Method, Topic

_AND = " \\and "

__all__ = ["BuiltPaper", "PlantedFact", "build_paper"]

# Words of prose per section at scale 1.0: with the abstract, facts, list, table and headings
# the cleaned body lands near 3,000 words (the demo range is 2,600-3,500).
_BUDGET = {
    "intro": 430,
    "related": 380,
    "method": 560,
    "experiments": 520,
    "discussion": 360,
    "conclusion": 190,
}
# Where the planted facts go: spread over the body so that position analyses see them all.
_FACT_SLOTS = (
    "intro",
    "method",
    "experiments",
    "experiments",
    "experiments",
    "experiments",
    "experiments",
    "discussion",
)


@dataclass(frozen=True)
class PlantedFact:
    sentence: str
    term: str
    value: str
    dataset: str
    metric: str


@dataclass(frozen=True)
class BuiltPaper:
    files: dict[str, str]
    main_file: str
    title: str
    abstract: str
    facts: tuple[PlantedFact, ...]


def build_paper(
    rng: random.Random,
    topic: Topic,
    method: Method,
    authors: list[str],
    values: dict[tuple[str, str], float],
    scale: float = 1.0,
) -> BuiltPaper:
    """`values[(dataset, metric)]` are this method's results; they become the planted facts."""
    keys = [ref[0] for ref in topic.references]
    prose = ProseWriter(rng, topic, method, keys)
    facts = _facts(prose, topic, values)
    slots = {
        role: [f.sentence for f, r in zip(facts, _FACT_SLOTS, strict=True) if r == role]
        for role in _BUDGET
    }
    body = {
        role: _section_prose(prose, role, int(target * scale), slots[role])
        for role, target in _BUDGET.items()
    }
    title = f"{method.name}: {method.subtitle}"
    abstract = " ".join(
        [prose.sentence("intro") for _ in range(2)]
        + [
            f"We introduce {method.name}, which combines {method.components[0]} with "
            f"{method.components[1]}.",
            f"Experiments on four datasets show that {method.name} improves on "
            f"{topic.baselines[0]} and {topic.baselines[1]}.",
        ]
    )
    main_file = rng.choice(("main.tex", "ms.tex", "paper.tex", f"{method.name.lower()}.tex"))
    files = {
        main_file: _main(topic, method, authors, title, abstract, body),
        "sections/intro.tex": _intro(method, body["intro"]),
        "sections/method.tex": _method(topic, method, body["method"]),
        "sections/experiments.tex": _experiments(topic, method, body["experiments"], values, rng),
        "sections/discussion.tex": _discussion(body["discussion"], prose),
        "sections/appendix.tex": "\\section{Additional results}\n\\label{app:extra}\n"
        + _join(prose.paragraphs("experiments", 120)),
        "refs.bib": _bib(topic),
    }
    return BuiltPaper(files, main_file, title, abstract, tuple(facts))


def format_value(value: float, decimals: int) -> str:
    return f"{value:.{decimals}f}"


def _facts(
    prose: ProseWriter, topic: Topic, values: dict[tuple[str, str], float]
) -> list[PlantedFact]:
    out = []
    pairs = [(d, m) for d in topic.datasets for m in topic.metrics]
    prose.rng.shuffle(pairs)
    for index, (dataset, metric) in enumerate(pairs):
        value = format_value(values[(dataset[0], metric.name)], metric.decimals)
        sentence = prose.fact(index, dataset, metric.name, value + metric.unit)
        out.append(PlantedFact(sentence, prose.method.name, value, dataset[0], metric.name))
    return out


def _section_prose(prose: ProseWriter, role: str, target: int, facts: list[str]) -> str:
    paragraphs = prose.paragraphs(role, target)
    for fact in facts:
        para = prose.rng.choice(paragraphs)
        para.insert(prose.rng.randint(1, len(para)), fact)
    return _join(paragraphs, prose.rng)


def _join(paragraphs: list[list[str]], rng: random.Random | None = None) -> str:
    """One sentence per line, blank lines between paragraphs, some author comments."""
    blocks = []
    for para in paragraphs:
        lines = list(para)
        if rng and rng.random() < 0.3:
            lines[-1] += "  % TODO: tighten before camera-ready"
        if rng and rng.random() < 0.25:
            lines.insert(0, "% NOTE(rev2): the reviewers asked for more detail here")
        blocks.append("\n".join(lines))
    return "\n\n".join(blocks) + "\n"


def _main(
    topic: Topic,
    method: Method,
    authors: list[str],
    title: str,
    abstract: str,
    body: dict[str, str],
) -> str:
    macros = "\n".join(topic.macros)
    return f"""% {method.name}: arXiv version, compiled with pdflatex
\\documentclass[11pt]{{article}}
\\usepackage{{amsmath,amssymb}}
\\usepackage{{booktabs}}
\\usepackage[numbers]{{natbib}}
\\usepackage{{comment}}
% macros used throughout the paper
\\newcommand{{\\ours}}{{{method.name}}}
{macros}
\\newcommand{{\\R}}{{\\mathbb{{R}}}}
\\title{{{title}}}
\\author{{{_AND.join(authors)}}}
\\date{{}}
\\begin{{document}}
\\maketitle
\\begin{{abstract}}
{abstract}
\\end{{abstract}}

\\input{{sections/intro}}

\\section{{Related Work}}
\\label{{sec:related}}
{body["related"]}
\\input{{sections/method.tex}}
\\input{{sections/experiments}}
\\include{{sections/discussion}}

\\section{{Conclusion}}
\\label{{sec:conclusion}}
{body["conclusion"]}
%\\section{{Broader impact}}
%We do not foresee negative societal consequences of this work.

\\bibliographystyle{{plainnat}}
\\bibliography{{refs}} % refs.bib ships with the source
\\appendix
\\input{{sections/appendix}}
\\end{{document}}
"""


def _intro(method: Method, prose: str) -> str:
    items = "\n".join(
        f"  \\item We introduce {c} as part of {method.name}." for c in method.components
    )
    return (
        f"\\section{{Introduction}}\n\\label{{sec:intro}}\n{prose}\n"
        f"Our contributions are as follows:\n\\begin{{itemize}}\n{items}\n"
        f"  \\item We release code and evaluation scripts.\n\\end{{itemize}}\n"
    )


def _method(topic: Topic, method: Method, prose: str) -> str:
    head, _, tail = prose.partition("\n\n")
    return (
        f"\\section{{Method}}\n\\label{{sec:method}}\n\\subsection{{Problem setting}}\n{head}\n\n"
        f"We write the model in its standard form,\n\\begin{{equation}}\n  {topic.equation}\n"
        f"  \\label{{eq:main}}\n\\end{{equation}}\nwhere the notation follows "
        f"Section~\\ref{{sec:related}}.\n"
        f"In what follows, \\ours{{}} denotes the full model with all components enabled.\n\n"
        f"\\subsection{{The {method.name} model}}\n{tail}"
    )


def _experiments(
    topic: Topic,
    method: Method,
    prose: str,
    values: dict[tuple[str, str], float],
    rng: random.Random,
) -> str:
    metric = topic.metrics[0]
    names = [d[0] for d in topic.datasets]
    rows = [
        f"{method.name} & "
        + " & ".join(format_value(values[(d, metric.name)], metric.decimals) for d in names)
        + r" \\"
    ]
    for baseline in topic.baselines[:3]:
        cells = (format_value(rng.uniform(metric.low, metric.high), metric.decimals) for _ in names)
        rows.append(f"{baseline} & " + " & ".join(cells) + r" \\")
    head, _, tail = prose.partition("\n\n")
    old = format_value(rng.uniform(metric.low, metric.high), metric.decimals)
    return (
        f"\\section{{Experiments}}\n\\label{{sec:experiments}}\n\\subsection{{Setup}}\n{head}\n\n"
        f"\\subsection{{Results}}\n"
        f"% Superseded draft: {method.name} reached a {metric.name} of {old} on {names[0]}.\n"
        f"Table~\\ref{{tab:main}} lists the {metric.name} of every method on the four "
        f"datasets.\n"
        f"Relative to the strongest baseline, the average change is about "
        f"{rng.randint(4, 19)}\\% across them.\n"
        f"\\begin{{table}}[t]\n\\centering\n"
        f"\\caption{{{metric.name[0].upper() + metric.name[1:]} on the four datasets.}}\n"
        f"\\label{{tab:main}}\n\\begin{{tabular}}{{l{'c' * len(names)}}}\n\\toprule\n"
        f"Method & {' & '.join(names)} \\\\\n\\midrule\n"
        + "\n".join(rows)
        + "\n\\bottomrule\n\\end{tabular}\n\\end{table}\n\n"
        "\\begin{comment}\nAn earlier version of this section compared against a buggy "
        "baseline and is kept here for reference only.\n\\end{comment}\n\n" + tail
    )


def _discussion(prose: str, writer: ProseWriter) -> str:
    cut = " ".join(writer.sentence("discussion") for _ in range(2))
    head, _, tail = prose.partition("\n\n")
    return (
        f"\\section{{Discussion}}\n\\label{{sec:discussion}}\n{head}\n\n"
        f"\\iffalse\n{cut}\n\\fi\n\n\\subsection{{Limitations}}\n{tail}"
    )


def _bib(topic: Topic) -> str:
    return "\n".join(
        f"@article{{{key},\n  author = {{{authors}}},\n  title = {{{title}}},\n"
        f"  year = {{{year}}}\n}}\n"
        for key, authors, title, year in topic.references
    )
