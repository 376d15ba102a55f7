"""RAPID-style's pure parts against hand-computed values (docs/design.md §15)."""

from __future__ import annotations

from lilo.tasks.config import OfflineSettings
from lilo.tasks.llm.offline import reply
from lilo.tasks.methods._section_writer import abstract
from lilo.tasks.methods._toposort import topological_order
from lilo.tasks.methods.rapid import parse_dependencies, structures


def test_topological_order_is_stable_in_outline_order():
    # 2 needs 3, 4 needs everything: 1 and 3 are ready first, 1 comes first in the outline
    assert topological_order([1, 2, 3, 4], {4: [1, 2, 3], 2: [3]}) == ([1, 3, 2, 4], True)
    assert topological_order([1, 2, 3], {}) == ([1, 2, 3], True)
    # a section depending on itself or on an unknown section: ignored
    assert topological_order([1, 2], {1: [1, 9], 2: [1]}) == ([1, 2], True)


def test_a_cycle_falls_back_to_the_outline_order():
    assert topological_order([1, 2, 3], {1: [2], 2: [1]}) == ([1, 2, 3], False)
    assert topological_order([1, 2, 3], {1: [3], 2: [1], 3: [2]}) == ([1, 2, 3], False)


def test_dependency_replies_in_several_shapes():
    reply = "1: None\n2) 1\n**3.** 1, 2\nSection 4: 2 and 3\n7: 1\nnoise"
    assert parse_dependencies(reply, 3) == {1: [], 2: [1], 3: [1, 2]}


def test_papers_own_structure_and_abstract():
    text = "\\begin{abstract}\nWe study X.\n\\end{abstract}\n\\section{Intro}\n\\subsection*{Setup}"
    assert structures([text]) == "Paper 1:\n## Intro\n### Setup"
    assert abstract(text) == "We study X."
    body = "Short.\n\n" + "word " * 25
    assert abstract(body) == ("word " * 25).strip()


def test_the_offline_outline_draft_keeps_the_papers_order_of_shared_headings():
    """The sections the papers share come in the order the first paper gives them, whatever
    the interpreter's hash seed (a set of headings used to decide it, so two processes
    drafted two outlines from one prompt)."""
    headings = ["Method", "Data", "Training", "Evaluation", "Results", "Ablations"]
    paper = "\n".join(f"## {h}" for h in headings)
    prompt = (
        "Draft the outline of the summary as Markdown headings.\n<intro>\nGraph neural "
        f"networks learn on graphs.\n</intro>\n<structures>\n{paper}\n\n{paper}\n</structures>"
    )
    text = reply([{"role": "user", "content": prompt}], OfflineSettings()).text
    shared = [line[3:].removesuffix(" across the papers") for line in text.splitlines()]
    assert [h for h in shared if h in headings] == headings
