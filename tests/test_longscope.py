"""LongScope-style's pure parts against hand-computed values (docs/design.md §15)."""

from __future__ import annotations

from collections import Counter

from lilo.tasks.config_loading import load_settings
from lilo.tasks.methods import get_method
from lilo.tasks.methods._convolve import sample_sets, top_k
from lilo.tasks.methods._skeleton import Node, Op, apply_edit, leaves, parse_edit, parse_skeleton
from lilo.tasks.methods.longscope import convolve, judge_score

SKELETON = """# Review
## Introduction
Extract: the field | Analyse: its history
## Methods
Extract: the methods | Analyse: how they differ
### Method of paper 1
### Method of paper 2
## Conclusion
Extract: open problems | Analyse: what follows"""


def test_edit_sampling_is_deterministic_for_a_seed():
    scores = [1.0, 4.0, 2.0, 0.0, 3.0]
    first = sample_sets(scores, 3, 4, seed=1)
    assert first == sample_sets(scores, 3, 4, seed=1)
    assert first == [[1, 2, 4], [1, 2, 4], [0, 2, 4], [0, 1, 4]]
    assert all(len(set(s)) == 3 for s in first)
    assert sample_sets([2.0, 5.0], 3, 2, seed=0) == [[0, 1], [0, 1]]  # width capped at n


def test_edit_sampling_is_proportional_to_score():
    # one edit per set: P(edit 1) = 3 / (1 + 3) = 0.75
    picks = Counter(s[0] for s in sample_sets([1.0, 3.0], 1, 4000, seed=0))
    assert abs(picks[1] / 4000 - 0.75) < 0.03
    # a zero score is (almost) never drawn while others can be
    assert all(s == [2] for s in sample_sets([0.0, 0.0, 10.0], 1, 200, seed=0))


def test_top_k_keeps_the_best_earlier_first_on_ties():
    assert top_k([5, 9, 9, 1], 2) == [1, 2]
    assert top_k([5, 9, 9, 1], 9) == [1, 2, 0, 3]
    assert top_k([5, 9], 0) == []


def test_judge_scores_are_bounded_and_summed():
    assert judge_score('{"structure": 8, "descriptions": 7.5}') == 15.5
    assert judge_score('{"structure": 12}') == 10.0
    assert judge_score("no idea") == 0.0


def test_skeleton_edits_and_leaves():
    nodes = parse_skeleton(SKELETON)
    assert [n.heading for n in nodes][:3] == ["Review", "Introduction", "Methods"]
    assert nodes[2].guide == "Extract: the methods | Analyse: how they differ"
    assert leaves(nodes) == [1, 3, 4, 5]
    ops = parse_edit("ADD: Datasets | Extract: data | Analyse: coverage\n- DELETE: methods\nhi")
    assert ops == [
        Op("ADD", "Datasets", "Extract: data | Analyse: coverage"),
        Op("DELETE", "methods"),
    ]
    edited = apply_edit(nodes, ops)
    # the new section goes before the conclusion; Methods leaves with its subsections
    assert [n.heading for n in edited] == ["Review", "Introduction", "Datasets", "Conclusion"]
    assert apply_edit(edited, ops[:1]) == edited  # adding an existing heading: no change


def test_convolution_keeps_top_k_of_old_and_merged_edits():
    a, b, c = [Op("ADD", "A")], [Op("ADD", "B")], [Op("ADD", "C")]

    def merge(chosen, label):
        return list(dict.fromkeys(op for e in chosen for op in e))

    edits, scores, record = convolve([a, b, c], len, merge, 1, 2, 2, 2, seed=0)
    # each merged set of two single-op edits scores 2 and beats the originals (1)
    assert scores == [2, 2] and all(len(e) == 2 for e in edits)
    assert record[0]["kept"] == [3, 4] and len(record[0]["sets"]) == 2
    assert convolve([a, b + c], len, merge, 0, 2, 2, 2, seed=0)[1] == [2, 1]


def test_quick_preset_and_paper_defaults_are_recorded():
    settings = load_settings(None, {})
    paper = get_method("longscope", settings.generate, settings.llm, settings.embedding)
    assert (paper.variant, paper.args["layers"], paper.args["kernel_width"]) == ("longscope", 6, 3)
    assert (paper.args["sets"], paper.args["top_k"], paper.args["best_of"]) == (10, 6, 3)
    quick_settings = load_settings(None, {"generate.longscope.preset": "quick"})
    quick = get_method("longscope", quick_settings.generate, settings.llm, settings.embedding)
    assert quick.variant == "longscope[quick]"
    assert {k: quick.args[k] for k in ("layers", "sets", "best_of", "rounds")} == {
        "layers": 1,
        "sets": 2,
        "best_of": 1,
        "rounds": 1,
    }
    assert Node(2, "x") in parse_skeleton("## x")
