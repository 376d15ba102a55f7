"""`lilo reproduce ral-writer`: the runs the paper needs, their estimate before they start,
the tables shaped with the published numbers beside lilo's, and the page holding every
table and figure. (The full run on the demo corpus is measured in the report of the work,
not here: it makes hundreds of generations.)"""

from __future__ import annotations

import pandas as pd
import pytest
from conftest import copy_imported_longinoutbench

from lilo.flows.cli import main
from lilo.tasks.reproduce.claims import COLUMNS, claims
from lilo.tasks.reproduce.page import PaperPage, Section, render_page
from lilo.tasks.reproduce.plan import estimate_units, figure_length, plan_runs
from lilo.tasks.reproduce.published import (
    overall_check,
    published_numbers,
    statements,
    statements_about,
)
from lilo.tasks.reproduce.sections import table2, table2_beside, table4, table4_beside
from lilo.tasks.reproduce.significance import cell_statistics


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


def test_the_papers_132_values_carry_their_table_row_and_column() -> None:
    """All of Table 2 (4 backbones, 10 backbone x method rows, Overall and 3 lengths, 3
    scores: 120) and of Table 4 (12), each naming where in the paper it was read."""
    paper = published_numbers()
    assert len(paper) == 132
    assert paper.groupby("table").size().to_dict() == {"table2": 120, "table4": 12}
    t2 = paper[paper["table"] == "table2"]
    assert t2["backbone"].nunique() == 4 and len(t2.groupby(["backbone", "method"])) == 10
    assert sorted(t2["target_words"].unique()) == [0, 4000, 8000, 16000]
    assert t2.groupby(["backbone", "method", "target_words"]).size().eq(3).all()
    for r in paper.to_dict(orient="records"):
        assert r["source"].startswith("RAL-Writer paper (arXiv 2503.06868), Table ")
        assert f" {r['method'].replace('_', '-')}".lower() in r["source"].lower()
    row = paper[
        (paper["backbone"] == "Qwen2.5-14B-Instruct") & (paper["method"] == "agentwrite")
        & (paper["target_words"] == 16000) & (paper["metric"] == "s_c")
    ].iloc[0]  # fmt: skip
    assert (row["value"], row["marked_best"]) == (55.15, True)
    assert row["source"].endswith("row Qwen2.5-14B-Instruct AgentWrite, column 16k S_c")
    said = statements()
    assert len(said) == 12 and said["source"].str.contains("section").all()
    assert "peaks at k = 12" in statements_about("Figure 6b")
    assert statements_about("Figure 99") == ""


def test_the_paper_checked_against_itself() -> None:
    """29 of Table 2's 30 Overall cells are the mean of their three lengths to rounding; the
    one that is not is printed so. The underline marks the highest value of its backbone x
    length x score wherever a backbone ran several methods; Table 4's Overall is the mean of
    its lengths and its increase RAL-Writer minus AgentWrite."""
    check = overall_check()
    assert len(check) == 30 and int(check["agrees"].sum()) == 29
    off = check[~check["agrees"]].iloc[0]
    assert (off["backbone"], off["method"], off["metric"]) == (
        "Qwen2.5-14B-Instruct", "agentwrite", "s_c"
    )  # fmt: skip
    assert (off["printed"], off["mean_of_lengths"]) == (54.10, 54.05)
    paper = published_numbers()
    t2 = paper[paper["table"] == "table2"]
    several = t2.groupby("backbone")["method"].transform("nunique") > 1
    top = t2.groupby(["backbone", "target_words", "metric"])["value"].transform("max")
    assert (t2["marked_best"] == (several & (t2["value"] == top))).all()
    assert int(t2["marked_best"].sum()) == 26
    t4 = paper[paper["table"] == "table4"].pivot_table(
        index="target_words", columns="method", values="value"
    )
    assert t4.loc[0, ["agentwrite", "ral_writer"]].round(2).tolist() == (
        t4.loc[[4000, 8000, 16000], ["agentwrite", "ral_writer"]].mean().round(2).tolist()
    )
    assert ((t4["ral_writer"] - t4["agentwrite"]).round(2) == t4["increase"]).all()


def _scores(backbone: str = "local:gemma", lengths=(4000, 8000), samples: int = 6) -> pd.DataFrame:
    """Headline score rows: RAL-Writer's S_c 5 above AgentWrite's on every sample; Single's
    S_l 50 below; each S_l 20 lower at the longer length; S_q the same for every method."""
    rows = []
    for s in range(samples):
        for t in lengths:
            for method, s_l, s_c in (("single", 10, 30), ("agentwrite", 60, 40),
                                     ("ral_writer", 70, 45)):  # fmt: skip
                for score, value in (
                    ("length", s_l - 20 * lengths.index(t) + s),
                    ("consistency", s_c + s + lengths.index(t)),
                    ("quality", 50 + s),
                ):
                    rows.append(
                        {"sample_id": f"s{s}", "method": method, "variant": method,
                         "target_words": t, "backbone": backbone, "score": score,
                         "value": float(value)}
                    )  # fmt: skip
    return pd.DataFrame(rows)


def test_lilos_overall_is_the_mean_of_its_lengths() -> None:
    cells = pd.DataFrame(cell_statistics(_scores()))
    for (variant, score), cell in cells.groupby(["variant", "score"]):
        by = cell.set_index("target_words")["mean"]
        assert by[0] == pytest.approx((by[4000] + by[8000]) / 2), (variant, score)


def test_the_claims_say_what_reproduced_and_how_sure() -> None:
    table = claims(published_numbers(), _scores())
    assert list(table.columns) == COLUMNS
    row = table.set_index(["claim", "lilo_setting"])
    first = row.loc[("Qwen2.5-32B-Instruct, 4k: ral_writer first on S_c",
                     "4k: ral_writer - agentwrite")]  # fmt: skip
    assert (first["agrees"], first["n"], first["difference"]) == ("yes", 6, "+5.0 [+5.0, +5.0]")
    assert first["p"] == pytest.approx(2 / 64, abs=1e-4) and first["reproduced"]
    # Qwen2.5-14B-Instruct's 8k S_l: AgentWrite first in the paper, RAL-Writer in lilo's run.
    other = row.loc[("Qwen2.5-14B-Instruct, 8k: agentwrite first on S_l",
                     "8k: agentwrite - ral_writer")]  # fmt: skip
    assert (other["agrees"], other["difference"], other["reproduced"]) == (
        "no", "-10.0 [-10.0, -10.0]", False
    )  # fmt: skip
    # A tie in lilo's run that holds the paper's first agrees, within noise.
    tie = table[table["claim"] == "Qwen2.5-14B-Instruct, 4k: ral_writer first on S_q"].iloc[0]
    assert (tie["agrees"], tie["p"], tie["reproduced"]) == ("yes", 1.0, False)
    assert (table[table["lilo_setting"].str.startswith("16k")]["agrees"] == "not run").all()
    above = table[table["claim"].str.startswith("RAL-Writer's S_c above AgentWrite's")]
    assert list(above["lilo_setting"]) == [
        "4k: ral_writer - agentwrite", "8k: ral_writer - agentwrite",
        "Overall (4k, 8k): ral_writer - agentwrite",
    ]  # fmt: skip
    assert above["paper_holds"].all() and above["reproduced"].all()
    below = table[table["claim"] == "Single's S_l far below the Plan-Write methods'"]
    assert below["paper"].iloc[0] == (
        "below in 24 of 24 cells (Qwen2.5-14B-Instruct, Qwen2.5-32B-Instruct)"
    )
    assert set(below[below["lilo_setting"].str.contains("compress")]["agrees"]) == {"not run"}
    falls = table[table["claim"].str.startswith("S_l falls")]
    assert not falls["paper_holds"].any()
    assert (
        falls["paper"].iloc[0] == "strictly in 9 of 10 backbone x method rows (not GPT-4o single)"
    )
    assert list(falls["lilo_setting"]) == [
        f"{m}: 4k - 8k" for m in ("agentwrite", "ral_writer", "single")
    ]
    assert falls["reproduced"].all()
    assert table[table["claim"].str.contains(" first on ")]["paper_holds"].all()
    # Nothing run: every claim listed, none run.
    empty = claims(published_numbers(), _scores().iloc[0:0])
    assert set(empty["agrees"]) == {"not run"} and empty["claim"].nunique() == 27


def _intervals(scores: pd.DataFrame) -> pd.DataFrame:
    return pd.DataFrame(cell_statistics(scores)).assign(
        reference=None, difference=None, difference_low=None, difference_high=None,
        p_value=None, within_noise=None,
    )  # fmt: skip


def test_table2_beside_the_paper_keeps_every_published_row() -> None:
    """lilo's cells on Qwen2.5-14B-Instruct stand beside the paper's; the paper's other
    backbones keep their rows alone; lilo's own backbone follows with its rows alone."""
    qwen = _scores("openai:Qwen/Qwen2.5-14B-Instruct", (4000, 8000, 16000))
    both = _intervals(pd.concat([qwen, _scores("local:gemma")]))
    table = table2_beside(both)
    assert len(table) == 40 + 3 * 3  # the paper's rows, then gemma's methods x (4k, 8k, Overall)
    row = table.set_index(["backbone", "method", "length"])
    aw = row.loc[("Qwen2.5-14B-Instruct", "agentwrite", "16k")]
    assert aw["S_c paper"] == "55.15 *" and aw["S_c lilo"].startswith("44.5 [")
    assert aw["S_c lilo - paper"] == "-10.65" and aw["n"] == 6
    assert row.loc[("Qwen2.5-14B-Instruct", "ral_writer", "4k"), "S_c lilo"].endswith(" +")
    assert (
        row.loc[("Qwen2.5-14B-Instruct", "agentwrite", "Overall"), "S_c lilo - paper"] == "-10.60"
    )
    assert row.loc[("Qwen2.5-14B-Instruct", "agentwrite", "Overall"), "S_c paper"] == "54.10"
    gpt = row.loc[("GPT-4o", "single", "4k")]
    assert (gpt["S_l paper"], gpt["S_l lilo"], gpt["lilo backbone"]) == ("0.00", "-", "-")
    gemma = row.loc[("local:gemma", "single", "Overall")]
    assert gemma["S_l paper"] == "-" and gemma["S_l lilo"].startswith("2.5 [")
    cost = pd.DataFrame(
        [(m, t, "local:gemma", 2, 1000.0 * (1 + (m == "ral_writer")) + t, 10.0)
         for m in ("agentwrite", "ral_writer") for t in (4000, 8000, 16000)],
        columns=["method", "target_words", "backbone", "generations", "tokens_in_per_summary",
                 "tokens_out_per_summary"],
    )  # fmt: skip
    t4 = table4_beside(cost).set_index(["length", "method"])
    assert len(t4) == 12 and not t4["same backbone"].any()
    assert t4.loc[("4k", "agentwrite"), "lilo"] == 5.0
    assert t4.loc[("4k", "agentwrite"), "lilo - paper"] == 5.0 - 405.0
    assert t4.loc[("Overall", "increase"), ["paper", "lilo"]].tolist() == [168.59, 1.0]
    assert table4_beside(cost.iloc[0:0])["lilo"].isna().all()


def _with_compress(scores: pd.DataFrame, variant: str) -> pd.DataFrame:
    """`scores` plus compress's rows under `variant`: AgentWrite's values, S_l 1 lower."""
    aw = scores[scores["method"] == "agentwrite"]
    compress = aw.assign(method="compress", variant=variant)
    compress["value"] -= (compress["score"] == "length").astype(float)
    return pd.concat([scores, compress], ignore_index=True)


def test_compress_under_its_compressors_label_stands_for_the_papers_compress() -> None:
    """lilo's compress runs as `compress[extractive]` where LLMLingua is not installed: that
    is the cell beside the paper's compress in Table 2 and in the claims, never dropped for
    not being named `compress`; a sweep's variant still is not the method's."""
    scores = _with_compress(_scores("openai:Qwen/Qwen2.5-14B-Instruct"), "compress[extractive]")
    own = {"compress": "compress[extractive]"}
    row = table2_beside(_intervals(scores), own).set_index(["backbone", "method", "length"])
    cell = row.loc[("Qwen2.5-14B-Instruct", "compress", "4k")]
    assert cell["S_l lilo"].startswith("61.5 [") and cell["n"] == 6
    unnamed = table2_beside(_intervals(scores)).set_index(["backbone", "method", "length"])
    assert unnamed.loc[("Qwen2.5-14B-Instruct", "compress", "4k"), "S_l lilo"] == "-"
    below = claims(published_numbers(), scores, own=own)
    below = below[below["claim"] == "Single's S_l far below the Plan-Write methods'"]
    with_compress = below[below["lilo_setting"].str.contains("compress")]
    assert len(with_compress) and set(with_compress["agrees"]) == {"yes"}
    swept = _with_compress(_scores(), "compress[extractive,sees-written]")
    assert set(
        claims(published_numbers(), swept, own=own).query(
            "claim == \"Single's S_l far below the Plan-Write methods'\" "
            "and lilo_setting.str.contains('compress')"
        )["agrees"]
    ) == {"not run"}


def test_the_paper_methods_labels_are_those_of_the_table2_run() -> None:
    from lilo.flows.reproduce import paper_variants
    from lilo.tasks.config import Settings

    own = paper_variants(Settings(), (4000,))
    assert set(own) == {"single", "agentwrite", "compress", "ral_writer"}
    assert own["single"] == "single" and own["compress"].startswith("compress[")


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
