"""`lilo reproduce ral-writer`: the runs the paper needs, their estimate before they start,
the tables shaped with the published numbers beside lilo's, and the page holding every
table and figure. (The full run on the demo corpus is measured in the report of the work,
not here: it makes hundreds of generations.)"""

from __future__ import annotations

import pandas as pd
import pytest
from conftest import copy_imported_longinoutbench

from lilo.flows.cli import main
from lilo.tasks.reproduce.page import PaperPage, Section, render_page
from lilo.tasks.reproduce.plan import estimate_units, figure_length, plan_runs
from lilo.tasks.reproduce.published import beside_published, published_numbers
from lilo.tasks.reproduce.sections import table2, table4


def test_the_plan_covers_every_table_and_figure_at_the_papers_settings() -> None:
    plan = {p.name: p for p in plan_runs((4000, 8000, 16000))}
    assert list(plan) == ["table2", "fig6a", "fig6b", "fig8"]
    assert plan["table2"].overrides["generate.methods"] == [
        "single", "agentwrite", "compress", "ral_writer"
    ]  # fmt: skip
    assert plan["fig6a"].overrides["generate.sweep"] == {
        "generate.ral.a": [5, 20, 60],
        "generate.ral.b": [0.1, 0.3, 0.5],
    }
    assert plan["fig6b"].overrides["generate.ral.a"] == 10
    assert plan["fig6b"].overrides["generate.target_words"] == [8000]
    assert plan["fig8"].overrides["generate.permutations"] is True
    assert figure_length((1000, 2000)) == 2000


def test_estimate_from_history_and_from_prompt_sizes_by_hand() -> None:
    units = pd.DataFrame(
        [
            {"method": "single", "target_words": 1000, "prompt_tokens": 100, "steps": 2,
             "questions": 4},
            {"method": "agentwrite", "target_words": 1000, "prompt_tokens": 100, "steps": 2,
             "questions": 4},
        ]
    )  # fmt: skip
    history = pd.DataFrame(
        [{"method": "single", "target_words": 1000, "calls": 1.0, "tokens_in": 120.0,
          "tokens_out": 900.0}]
    )  # fmt: skip
    e = estimate_units(units, history, judge=(10.0, 1000.0, 50.0))
    # single from history: 1 call, 120 in, 900 out; agentwrite from its prompt: 1 + 2 calls,
    # 100 * 3 + 1350 * 2 / 2 in, 1350 out; the judge 10 calls, 1000 in, 50 out per summary.
    assert (e.generations, e.calls) == (2, 1 + 3 + 20)
    assert e.tokens_in == 120 + 300 + 1350 + 2000
    assert e.tokens_out == 900 + 1350 + 100
    assert "1 from earlier runs" in e.source and "1 from prompt sizes" in e.source
    assert estimate_units(units.iloc[0:0], history, None).source == "nothing left to run"


def test_published_numbers_carry_their_source_and_sit_beside_lilos() -> None:
    paper = published_numbers()
    assert paper["source"].str.contains("Table").all()
    ral = paper[(paper["table"] == "table2") & (paper["method"] == "ral_writer")]
    assert dict(zip(ral["metric"], ral["value"], strict=True)) == {
        "s_l": 75.15, "s_c": 55.28, "s_q": 75.68
    }  # fmt: skip
    lilo = pd.DataFrame(
        [{"method": "ral_writer", "target_words": 0, "backbone": "openai:Qwen/Qwen2.5-14B-Instruct",
          "metric": "s_c", "value": 50.0}]
    )  # fmt: skip
    both = beside_published(lilo, "table2")
    row = both[(both["method"] == "ral_writer") & (both["metric"] == "s_c")].iloc[0]
    assert (row["published"], row["lilo"], row["difference"]) == (55.28, 50.0, -5.28)
    assert bool(row["same_backbone"])
    assert both["lilo"].isna().sum() == len(both) - 1  # nothing invented for the others


def test_table2_marks_a_difference_within_noise_and_table4_the_increase() -> None:
    cells = pd.DataFrame(
        [
            # variant, length, score, n, mean, low, high, difference, d_low, d_high, p, noise
            ("ral_writer", 1000, "consistency", 3, 50.0, 45.0, 55.0, None, None, None, None, None),
            ("agentwrite", 1000, "consistency", 3, 48.0, 40.0, 52.0, -2.0, -6.0, 1.0, 0.5, True),
            ("single", 1000, "consistency", 3, 30.0, 28.0, 33.0, -20.0, -24.0, -16.0, 0.25, False),
        ],
        columns=["variant", "target_words", "score", "n", "mean", "ci_low", "ci_high",
                 "difference", "difference_low", "difference_high", "p_value", "within_noise"],
    )  # fmt: skip
    table = table2(cells).set_index("method")
    assert table.loc["agentwrite", "s_c"] == "48.0 [40.0, 52.0]"
    assert table.loc["agentwrite", "S_c - reference"] == "-2.0 [-6.0, +1.0]"
    assert table.loc["agentwrite", "within_noise"] and not table.loc["single", "within_noise"]
    cost = pd.DataFrame(
        [("agentwrite", 1000, "b", 2, 1000.0, 10.0), ("ral_writer", 1000, "b", 2, 1500.0, 10.0)],
        columns=["method", "target_words", "backbone", "generations", "tokens_in_per_summary",
                 "tokens_out_per_summary"],
    )  # fmt: skip
    t4 = table4(cost).set_index("length")
    assert t4.loc["1k", "increase"] == 0.5 and t4.loc["Overall", "ral_writer"] == 1.5


def test_the_page_holds_every_section_and_highlights_noise() -> None:
    sections = [
        Section("table2", "Table 2: x", "n", pd.DataFrame({"m": ["a"], "within_noise": [True]}),
                marked="within_noise"),
        Section("fig8", "Figure 8: y", "n", pd.DataFrame({"slot": [1]}), png=b"\x89PNG"),
    ]  # fmt: skip
    html = render_page(PaperPage("v1", 3, "b", "j", sections, pd.DataFrame({"run": ["t"]})))
    assert 'id="table2"' in html and 'id="fig8"' in html and 'class="marked"' in html
    assert "<td>a</td><td>yes</td>" in html and "<th>within_noise</th>" in html
    assert "data:image/png;base64," in html and "<script" not in html


def test_dry_run_prints_the_estimate_on_an_imported_benchmark(
    tmp_path, capsys, imported_longinoutbench
) -> None:
    data = copy_imported_longinoutbench(imported_longinoutbench, tmp_path)
    args = ["reproduce", "ral-writer", "--dataset", "longinoutbench", "--samples", "2"]
    assert main([*args, "--target-words", "1000", "--data-dir", str(data), "--dry-run"]) == 0
    out = capsys.readouterr().out
    # 4 methods; Figure 6a's 9 points less the paper's own (in table2); 6b's 4; Figure 8's
    # 2 more orders of each 3-paper sample: per sample.
    for run, generations in (("table2", 8), ("fig6a", 16), ("fig6b", 8), ("fig8", 4)):
        assert f"{run}" in out and f" {generations} generations" in out
    assert "from prompt sizes" in out and "estimate:" in out
    assert main([*args, "--data-dir", str(tmp_path / "none"), "--dry-run"]) == 2


@pytest.mark.parametrize("bad", ["--target-words", "--samples"])
def test_bad_options_are_one_line(bad, capsys) -> None:
    assert main(["reproduce", "ral-writer", bad, "x"]) == 2
    assert "lilo:" in capsys.readouterr().err


def test_figure_8_draws_a_line_per_method_and_length_with_the_orders_spread() -> None:
    """Two lengths of one method are two lines, each through slots 1..8 in order (one line
    through both would zigzag between them at each slot), with the spread over the orders
    as its error bars; the figure says how many orders it averages."""
    from lilo.tasks.reproduce.figures import fig8_png, position_lines

    rows = pd.DataFrame(
        [
            {"method": "ral_writer", "target_words": n, "position": p, "backbone": "b",
             "s_single": base + p, "spread": 2.0 + p, "orders": 8, "n": 8}
            for n, base in ((2000, 10.0), (4000, 40.0))
            for p in range(8, 0, -1)
        ]
    )  # fmt: skip
    lines = position_lines(rows, "s_single", "spread")
    assert [label for label, *_ in lines] == ["ral_writer, 2000 words", "ral_writer, 4000 words"]
    for (_, positions, values, errors), base in zip(lines, (10.0, 40.0), strict=True):
        assert positions == list(range(1, 9))
        assert values == [base + p for p in positions] and errors == [2.0 + p for p in positions]
    one = position_lines(rows[rows["target_words"] == 2000], "s_single")
    assert [(label, errors) for label, _, _, errors in one] == [("ral_writer", None)]
    assert fig8_png(rows).startswith(b"\x89PNG")
