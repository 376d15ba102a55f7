"""The scores and RAL-Writer's restatement pinned to hand-computed values (docs/design.md §7,
§8)."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from lilo.tasks.config_loading import load_settings
from lilo.tasks.llm import make_client
from lilo.tasks.llm.ledger import CallLog, read_calls
from lilo.tasks.methods import Unit, get_method
from lilo.tasks.methods._splitter import split_recursive
from lilo.tasks.methods.ral_writer import importance, position_bias, select_restatements
from lilo.tasks.prompt_packs import key_requirements, lilo_pack
from lilo.tasks.qa.parse import QAFormatError, tier_value
from lilo.tasks.records import PaperText, Sample
from lilo.tasks.scoring import consistency_score, length_score, quality_score


@pytest.mark.parametrize(
    ("required", "generated", "expected"),
    [
        (4000, 4000, 100.0),  # at the required length
        (4000, 9000, 100.0),  # past it: no penalty
        (4000, 3000, 100 * (1 - (4000 / 3000 - 1) / 2)),  # 83.33...
        (4000, 2000, 50.0),  # half the length: 1 - (2 - 1)/2
        (4000, 1000, 0.0),  # a quarter: 1 - (4 - 1)/2 < 0, floored
        (8000, 0, 0.0),
    ],
)
def test_length_score(required, generated, expected):
    assert length_score(required, generated) == pytest.approx(expected)
    assert length_score(4000, 3000) == pytest.approx(83.3333, abs=1e-4)


def test_consistency_tiers_and_average():
    assert [tier_value(v) for v in (0, 0.25, 0.5, 0.75, 1)] == [0.0, 0.25, 0.5, 0.75, 1.0]
    for bad in (0.3, 2, -0.25, True, "0.3", "high", None):
        with pytest.raises(QAFormatError):
            tier_value(bad)
    # the benchmark's own judge prompt shows the score as a string: "0.5" is a tier
    assert [tier_value(v) for v in ("0", "0.25", " 0.5", "0.75", "1")] == [0, 0.25, 0.5, 0.75, 1]
    # single mean 0.75, cross mean (0.25 + 0.75 + 0)/3 = 1/3: (0.75 + 1/3)/2 x100
    assert consistency_score([1, 0.5], [0.25, 0.75, 0]) == pytest.approx(54.1666667)
    # the two kinds weigh the same whatever their counts
    assert consistency_score([1] * 6, [0] * 2) == pytest.approx(50.0)
    assert consistency_score([0.5, 0.5], []) == pytest.approx(50.0)
    with pytest.raises(ValueError):
        consistency_score([], [])


def test_quality_is_mean_of_aspect_means():
    checklist = lilo_pack().checklist
    assert len(checklist) == 8 and all(len(items) == 5 for items in checklist.values())
    assert all(len(i.levels) == 5 for items in checklist.values() for i in items)
    items = {aspect: [1.0] * 5 for aspect in checklist}
    assert quality_score(items) == pytest.approx(100.0)
    items["structure"] = [0, 0.5, 0.5, 0.5, 0.5]  # mean 0.4
    items["reflection"] = [0.25, 0.25, 0.25, 0.25, 0.25]
    assert set(items) == {
        "instruction_following", "structure", "data_utilization", "correlation_analysis",
        "insightfulness", "critical_thinking", "reflection", "innovation",
    }  # fmt: skip
    assert quality_score(items) == pytest.approx(100 * (6 + 0.4 + 0.25) / 8)  # 83.125
    assert quality_score({"a": [1.0], "b": [0.0, 0.0, 0.0, 0.5]}) == pytest.approx(56.25)


def test_ral_position_bias_and_importance():
    a, b = 2, 0.4
    # N = 4: |2i/N - 1| = 1, 0.5, 0, 0.5 -> P = 0.4, 0.1, 0, 0.1
    assert [position_bias(i, 4, a, b) for i in range(4)] == pytest.approx([0.4, 0.1, 0.0, 0.1])
    assert importance([0.5, 0.9, 0.2, 0.8], a, b) == pytest.approx([0.1, 0.8, 0.2, 0.7])
    # top-k by I, returned in ascending I: the most important comes last
    assert select_restatements([0.1, 0.8, 0.2, 0.7], 2) == [3, 1]
    assert select_restatements([0.1, 0.8, 0.2, 0.7], 3) == [2, 3, 1]
    # the paper's defaults: a = 60 makes the bias a cliff at the very ends only
    assert position_bias(0, 10, 60, 0.3) == pytest.approx(0.3)
    assert position_bias(5, 10, 60, 0.3) == 0.0
    assert position_bias(9, 10, 60, 0.3) == pytest.approx(0.3 * 0.8**60)
    assert position_bias(1, 10, 60, 0.3) < 1e-5


def _reference_pick(relevance: list[float], a: float, b: float, k: int) -> list[int]:
    """The reference's selection as its RestateAgent computes it (src/agent/restate.py),
    written out here: |b * (2(x - 0.5))^a| with numpy, a stable sort on the score reversed,
    the top k, reversed."""
    with np.errstate(invalid="ignore"):
        items = [
            {"id": i, "score": r - np.fabs(b * np.power(2 * (i / len(relevance) - 0.5), a))}
            for i, r in enumerate(relevance)
        ]
    ranked = sorted(items, key=lambda x: x["score"], reverse=True)
    return [x["id"] for x in ranked[:k]][::-1]


def test_a_non_integer_exponent_is_nan_under_the_reference_formula_and_picked_as_it_picks():
    """`generate.ral.position_formula=reference` (the paper profile): a negative base to a
    fractional power is NaN before the middle, as the reference computes it, and the NaN
    scores sort as the reference's sort leaves them; lilo's `magnitude` gives a value. For
    an integer exponent the two are the same."""
    assert math.isnan(position_bias(2, 10, 0.5, 0.3, "reference"))
    assert position_bias(2, 10, 0.5, 0.3) == pytest.approx(0.3 * 0.6**0.5)
    assert position_bias(8, 10, 0.5, 0.3, "reference") == pytest.approx(0.3 * 0.6**0.5)
    relevance = [0.31, 0.9, 0.05, 0.62, 0.4, 0.77, 0.2, 0.55, 0.8, 0.1, 0.35, 0.7]
    for a, k in ((0.5, 4), (1.5, 6), (60.0, 4), (3.0, 5)):
        picked = select_restatements(importance(relevance, a, 0.3, "reference"), k)
        assert picked == _reference_pick(relevance, a, 0.3, k), (a, k)
    for i in range(12):
        assert position_bias(i, 12, 60, 0.3) == position_bias(i, 12, 60, 0.3, "reference")
    assert load_settings(overrides={"profile": "paper"}).generate.ral.position_formula == (
        "reference"
    )


def _papers(count: int = 60) -> list[PaperText]:
    """Three papers of `count` paragraphs of about 25 words each."""
    topics = (
        "sparse gaussian processes with inducing points scale to large data",
        "stellar variability measured from photometric time series of nearby stars",
        "transformer language models summarise long scientific documents",
    )
    papers = []
    for n, topic in enumerate(topics, start=1):
        paragraphs = [
            f"Paragraph {j} of paper {n} studies {topic}. The method reaches {j + n}.{j} "
            f"percent error on benchmark B{j} and improves over baseline number {j}."
            for j in range(count)
        ]
        text = f"\\section{{Paper {n}}}\n\n" + "\n\n".join(paragraphs)
        papers.append(
            PaperText(
                f"2601.0000{n}", f"Paper {n}", text, len(text.split()), 0, "main.tex", "t", "s", "c"
            )
        )
    return papers


def test_ral_writer_prompt_order_in_lilos_writer_template(tmp_path, shared_embedder):
    """lilo's own writer template (the benchmark's are pinned in tests/test_benchmark_run.py):
    instruction, steps, text so far, the restatement block (top-k chunks of the whole
    instruction in ascending importance, joined by `---` lines), the current step, then the
    task's key requirements from the second step on (docs/design.md §7)."""
    settings = load_settings(
        None,
        {
            "data_dir": str(tmp_path),
            "generate.ral.k": 3,
            "generate.ral.chunk_words": 120,
            "generate.ral.overlap_words": 20,
        },
    )
    papers = _papers(30)  # over ten chunks of 120 words, as asserted below
    ids = tuple(p.paper_id for p in papers)
    sample = Sample("s1", "v1", ids, "Topic", "survey", sum(p.words for p in papers), "command")
    llm = make_client(settings)
    unit = Unit(sample, papers, 1000)
    generation = get_method("ral_writer", settings.generate, settings.llm, settings.embedding).run(
        unit, llm, shared_embedder, lilo_pack()
    )
    assert generation.error == "" and generation.restated
    writes = [
        json.loads(c.request)["messages"][-1]["content"]
        for c in llm.take_calls()
        if ":step" in c.purpose
    ]
    assert len(writes) == len(generation.restated) > 1
    instruction = lilo_pack().render("task", papers=[p.text for p in papers], length=1000)
    keys = key_requirements(instruction)
    # the whole instruction is chunked: the task text before the papers opens chunk 0
    chunks = split_recursive(instruction, 120, 20)
    assert chunks[0].startswith(instruction.lstrip()[:60]) and len(chunks) > 10
    for n, (prompt, record) in enumerate(zip(writes, generation.restated, strict=True)):
        assert record["k"] == 3 and len(record["chunks"]) == 3
        assert record["importance"] == sorted(record["importance"])  # ascending
        block = prompt[prompt.index("<restatement>\n") + 14 : prompt.index("\n</restatement>")]
        assert block.split("\n\n---\n\n") == [chunks[i] for i in record["chunks"]]
        parts = ["<instruction>", "<steps>", "<restatement>", "<step>"]
        if n:
            parts.insert(2, "<written>")
        positions = [prompt.index(p) for p in parts]
        assert positions == sorted(positions)
        tail = prompt[prompt.index("</step>") :]
        assert (keys in tail) == (n > 0)  # the key requirements, restated after the first step
        assert not math.isnan(sum(record["importance"]))


def test_ral_writer_k0_restates_nothing(tmp_path, shared_embedder):
    settings = load_settings(None, {"data_dir": str(tmp_path), "generate.ral.k": 0})
    method = get_method("ral_writer", settings.generate, settings.llm, settings.embedding)
    assert method.variant == "ral_writer[k=0]"
    papers = _papers(15)  # two chunks of the instruction: k = 0 leaves both
    sample = Sample("s1", "v1", tuple(p.paper_id for p in papers), "T", "s", 1, "command")
    llm = make_client(settings)
    generation = method.run(Unit(sample, papers, 1000), llm, shared_embedder, lilo_pack())
    assert generation.error == "" and all(r["k"] == 0 for r in generation.restated)
    prompts = [json.loads(c.request)["messages"][-1]["content"] for c in llm.take_calls()]
    assert not any("<restatement>" in p for p in prompts)


def test_a_run_counts_its_tokens_as_calls_return_and_leaves_the_calls_to_the_log(
    tmp_path, shared_embedder
):
    """A generation's tokens and calls are its calls' sums; with a call log the client keeps
    no call (a stage's long prompts are not held until it ends)."""
    settings = load_settings(None, {"data_dir": str(tmp_path / "data"), "generate.ral.k": 0})
    papers = _papers(15)  # two chunks of the instruction: k = 0 leaves both
    sample = Sample("s1", "v1", tuple(p.paper_id for p in papers), "T", "s", 1, "command")
    llm = make_client(settings, CallLog(tmp_path / "calls.jsonl"))
    method = get_method("ral_writer", settings.generate, settings.llm, settings.embedding)
    generation = method.run(Unit(sample, papers, 1000), llm, shared_embedder, lilo_pack())
    calls, _ = read_calls(tmp_path / "calls.jsonl")
    assert generation.error == "" and generation.llm_calls == len(calls) > 1
    assert generation.tokens_in == sum(c.tokens_in for c in calls) > 0
    assert generation.tokens_out == sum(c.tokens_out for c in calls) > 0
    assert generation.cost == 0.0 and {c.cost for c in calls} == {0.0}  # the offline engine
    assert llm.take_calls() == []
