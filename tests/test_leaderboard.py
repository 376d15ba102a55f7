"""The leaderboard as Table 2: Overall (each score's per-length means averaged over the
lengths run), the dataset version it was scored on, `lilo leaderboard --dataset --version
--format`, and an 80-column terminal that never cuts a number."""

from __future__ import annotations

import csv
import io
import json
import re

import pytest

from lilo.flows._stage import score_columns
from lilo.flows.cli import main
from lilo.tasks.records import Generation, Sample, ScoreRow
from lilo.tasks.scoring import scored_by
from lilo.warehouse import Warehouse
from lilo.warehouse.publishing import publish_warehouse
from lilo.warehouse.results import Expected, materialize_results

LONG = "agentwrite[sees-written-and-a-very-long-variant-name-for-wrapping]"
# (method, variant, length) -> (S_l, S_c, S_q) of its one sample
SCORES = {
    ("single", "single", 4000): (100.0, 50.0, 60.0),
    ("single", "single", 8000): (80.0, 30.0, 40.0),
    ("agentwrite", LONG, 4000): (100.0, 100.0, 100.0),
    ("agentwrite", LONG, 8000): (100.0, 90.0, 80.0),
    ("ral_writer", "ral_writer", 4000): (100.0, 70.0, 65.0),
}


def _seed(wh: Warehouse, dataset: str) -> None:
    sample = Sample("s1", dataset, ("a", "b", "c"), "GP kernels", "sv", 9000, "command")
    wh.upsert("dim_samples", [sample], ("sample_id",), extra={"run_id": "r"})
    for (method, variant, n), values in SCORES.items():
        gid = f"{dataset}-{variant}-{n}"
        gen = Generation(gid, "s1", method, {}, n, "offline:m", "t", 1, variant=variant)
        extra = {"run_id": "r", "config_hash": "h", "code_version": "c"}
        wh.upsert("fct_generations", [gen], ("generation_id",), extra=extra)
        rows = [
            ScoreRow(gid, score, value, judge="offline:judge")
            for score, value in zip(("length", "consistency", "quality"), values, strict=True)
        ]
        wh.upsert("fct_scores", rows, ("generation_id", "score"), extra={"run_id": "r"})


@pytest.fixture(scope="module")
def data_dir(tmp_path_factory):
    """Two result versions: v1 complete at 4k and 8k, then `other` where RAL-Writer lacks
    8k (partial, so not the default)."""
    root = tmp_path_factory.mktemp("board")
    with Warehouse(root / "lilo.duckdb", score_columns()) as wh:
        _seed(wh, "v1")
        variants = ["single", LONG, "ral_writer"]  # expected cells name the variants run
        first = Expected(["s1"], variants[:2], [4000, 8000], "offline:m")
        assert materialize_results(wh, "v1", "r1", first, scored_by=scored_by()).version == 1
        wh.con.execute("DELETE FROM fct_generations")
        wh.con.execute("DELETE FROM fct_scores")
        _seed(wh, "other")
        second = Expected(["s1"], variants, [4000, 8000], "offline:m")
        assert materialize_results(wh, "other", "r2", second, scored_by=scored_by()).partial
        publish_warehouse(wh, root / "published" / "lilo.duckdb", root)
    return root


def _rows(data_dir, sql: str) -> list[tuple]:
    with Warehouse(data_dir / "lilo.duckdb", score_columns()) as wh:
        return wh.con.execute(sql).fetchall()


def test_overall_averages_each_score_over_the_lengths(data_dir):
    rows = _rows(
        data_dir,
        "SELECT variant, target_words, overall_s_l, overall_s_c, overall_s_q, dataset_version "
        "FROM res_leaderboard WHERE version = 1",
    )
    assert rows == [
        ("single", 4000, 90.0, 40.0, 50.0, "v1"),
        ("single", 8000, 90.0, 40.0, 50.0, "v1"),
        (LONG, 4000, 100.0, 95.0, 90.0, "v1"),
        (LONG, 8000, 100.0, 95.0, 90.0, "v1"),
    ]  # ral_writer ran at 4k too, but version 1's run did not ask for it: not in it
    # RAL-Writer has no 8k summary in version 2: no Overall rather than its 4k alone
    ral = _rows(
        data_dir,
        "SELECT target_words, scored, expected, overall_s_c FROM res_leaderboard "
        "WHERE version = 2 AND method = 'ral_writer'",
    )
    assert ral == [(4000, 1, 1, None), (8000, 0, 1, None)]
    # the default leaderboard is version 1 (version 2 is partial), and says its dataset
    assert {r[0] for r in _rows(data_dir, "SELECT dataset_version FROM leaderboard")} == {"v1"}
    order = [r[0] for r in _rows(data_dir, "SELECT method FROM leaderboard")]
    assert order == ["single", "single", "agentwrite", "agentwrite"]


def _cli(capsys, monkeypatch, data_dir, *args: str) -> str:
    monkeypatch.setenv("COLUMNS", "80")
    assert main(["leaderboard", "--data-dir", str(data_dir), *args]) == 0
    return capsys.readouterr().out


def test_80_columns_never_cut_a_number(capsys, monkeypatch, data_dir):
    out = _cli(capsys, monkeypatch, data_dir)
    assert max(len(line) for line in out.splitlines()) <= 80
    assert "…" not in out
    shown = re.findall(r"\d+\.\d|\d+/\d+", out)
    assert shown.count("100.0") >= 6 and "95.0" in shown and "1/1" in shown
    assert "Overall" in out and "dataset v1" in out and "result version 1" in out
    # the long variant name wraps but is all there
    methods = [line.split("│")[1].strip() for line in out.splitlines() if line.startswith("│")]
    assert LONG in "".join(methods)


def test_50_columns_keep_every_method_name_and_number(capsys, monkeypatch, data_dir):
    """Too narrow for any table with a method column: each method's name on its own line,
    over a row per score; nothing cut, the same numbers as at 250 columns."""
    monkeypatch.setenv("COLUMNS", "250")
    assert main(["leaderboard", "--data-dir", str(data_dir)]) == 0
    wide = capsys.readouterr().out
    monkeypatch.setenv("COLUMNS", "50")
    assert main(["leaderboard", "--data-dir", str(data_dir)]) == 0
    out = capsys.readouterr().out
    assert max(len(line) for line in out.splitlines()) <= 50
    assert "…" not in out
    lines = [line.strip() for line in out.splitlines()]
    assert "single" in lines  # names whole, on their own lines (version 1: single and LONG)
    assert LONG in "".join(lines)  # wrapped, all there
    numbers = re.compile(r"[+-]?\d+\.\d|\d+/\d+")
    assert sorted(numbers.findall(out)) == sorted(numbers.findall(wide))


def test_wide_terminal_shows_table_2_layout(capsys, monkeypatch, data_dir):
    monkeypatch.setenv("COLUMNS", "250")
    assert main(["leaderboard", "--data-dir", str(data_dir)]) == 0
    out = capsys.readouterr().out
    assert "4k S_l" in out and "Overall S_q" in out and "…" not in out


def test_dataset_version_and_formats(capsys, monkeypatch, data_dir):
    out = _cli(capsys, monkeypatch, data_dir, "--dataset", "other", "--format", "csv")
    rows = list(csv.DictReader(io.StringIO(out)))
    assert len(rows) == 6 and {r["dataset_version"] for r in rows} == {"other"}
    assert {r["partial"] for r in rows} == {"true", "false"}  # not Python's True/False
    assert {"overall_s_l", "overall_s_c", "overall_s_q", "judge"} <= set(rows[0])
    doc = json.loads(
        _cli(capsys, monkeypatch, data_dir, "--result-version", "1", "--format", "json")
    )
    assert (doc["result_version"], doc["dataset_version"], doc["partial"]) == (1, "v1", False)
    assert doc["rows"][0]["overall_s_l"] == 90.0 and doc["rows"][0]["s_c"] == 50.0
    md = _cli(capsys, monkeypatch, data_dir, "--dataset", "other", "--format", "markdown")
    assert "| method | 4k S_l |" in md and "Overall n |" in md and "(PARTIAL)" in md
    # S_copy, a diagnostic, beside the three; these summaries were scored without it: "-".
    none = "- | " * 4  # 8k: no summary scored
    row = f"| ral_writer | 100.0 | 70.0 | 65.0 | - | 1/1 | {none}0/1 | {none}1/2 |"
    assert row in md


def test_unknown_dataset_or_version_is_one_line(capsys, data_dir):
    assert main(["leaderboard", "--data-dir", str(data_dir), "--dataset", "nope"]) == 1
    err = capsys.readouterr().err
    assert "no results for dataset version 'nope': there are other, v1" in err
    assert main(
        ["leaderboard", "--data-dir", str(data_dir), "--dataset", "v1", "--result-version", "2"]
    )
    assert "no result version 2 of dataset version 'v1': there are 1" in capsys.readouterr().err


# -- intervals and the paired comparison ------------------------------------------------

# Samples at 4k, (S_l, S_c, S_q) per sample, the pattern repeated. single minus ral_writer:
# S_l 0, -0.003, 0 (a mean that rounds to -0.0); S_c -10, -30, -50 (mean -30); S_q +5, -10,
# +5 (mean 0). Over 6 samples every S_c difference is negative: p = 2/64, the least the
# sign-flip test can give, and zero lies outside its interval. Over 3 samples p is 2/8
# and there is no interval at all (n too small).
PATTERN = {
    "ral_writer": [(100.0, 60.0, 55.0), (100.0, 70.0, 60.0), (100.0, 80.0, 65.0)],
    "single": [(100.0, 50.0, 60.0), (99.997, 40.0, 50.0), (100.0, 30.0, 70.0)],
}


def _values(method: str, n: int, k: int) -> list[float]:
    return [PATTERN[method][i % 3][k] for i in range(n)]


def _paired_board(root, n: int):
    from lilo.flows._statistics import record_statistics
    from lilo.tasks.config_loading import load_settings

    with Warehouse(root / "lilo.duckdb", score_columns()) as wh:
        for i in range(n):
            sample = Sample(f"s{i}", "v1", ("a", "b", "c"), "GP", "sv", 9000, "command")
            wh.upsert("dim_samples", [sample], ("sample_id",), extra={"run_id": "r"})
            for method in PATTERN:
                gid = f"{method}-{i}"
                gen = Generation(
                    gid, f"s{i}", method, {}, 4000, "offline:m", "t", 1, variant=method
                )
                extra = {"run_id": "r", "config_hash": "h", "code_version": "c"}
                wh.upsert("fct_generations", [gen], ("generation_id",), extra=extra)
                rows = [
                    ScoreRow(gid, score, PATTERN[method][i % 3][k], judge="offline:judge")
                    for k, score in enumerate(("length", "consistency", "quality"))
                ]
                wh.upsert("fct_scores", rows, ("generation_id", "score"), extra={"run_id": "r"})
        samples = [f"s{i}" for i in range(n)]
        expected = Expected(samples, ["single", "ral_writer"], [4000], "offline:m")
        version = materialize_results(wh, "v1", "r1", expected, scored_by=scored_by()).version
        settings = load_settings(overrides={"data_dir": str(root)})
        assert record_statistics(wh, version, settings) > 0
        publish_warehouse(wh, root / "published" / "lilo.duckdb", root)
    return root


@pytest.fixture(scope="module")
def six(tmp_path_factory):
    return _paired_board(tmp_path_factory.mktemp("six"), 6)


@pytest.fixture(scope="module")
def three(tmp_path_factory):
    return _paired_board(tmp_path_factory.mktemp("three"), 3)


def _interval(values: list[float]) -> str:
    from lilo.tasks.stats import bootstrap_interval

    ci = bootstrap_interval(values)
    return f"{ci.mean:.1f} [{ci.low:.1f}, {ci.high:.1f}]"


def _difference_interval(method: str, k: int, n: int) -> str:
    from lilo.tasks.formatting import fixed
    from lilo.tasks.stats import paired_comparison

    ci = paired_comparison(_values(method, n, k), _values("ral_writer", n, k)).difference
    return f"[{fixed(ci.low, sign=True)}, {fixed(ci.high, sign=True)}]"


def _compared(out: str) -> list[list[str]]:
    rows = [[c.strip() for c in line.split("│")[1:-1]] for line in out.splitlines() if "│" in line]
    return [r for r in rows if r[2:3] in (["S_l"], ["S_c"], ["S_q"])]


def test_each_cell_carries_its_interval_at_80_columns(capsys, monkeypatch, six):
    out = _cli(capsys, monkeypatch, six)
    assert max(len(line) for line in out.splitlines()) <= 80 and "…" not in out
    flat = " ".join(out.split())  # an interval may sit on the line below its score
    for method in PATTERN:
        for k in (1, 2):
            score, low_high = _interval(_values(method, 6, k)).split(" ", 1)
            assert score in flat and low_high in flat, (method, k)
    assert "95% bootstrap interval over samples" in flat
    # Under the table: the paired comparison with the reference; within noise is the test's
    # verdict (p >= 0.05), and the interval, the test's own, covers zero exactly then.
    assert _compared(out) == [
        ["single", "4k", "S_l", "+0.0", _difference_interval("single", 0, 6), "0.500", "yes"],
        ["", "4k", "S_c", "-30.0", _difference_interval("single", 1, 6), "0.031", "no"],
        ["", "4k", "S_q", "+0.0", _difference_interval("single", 2, 6), "1.000", "yes"],
    ]
    assert "-0.0" not in out and "Paired with ral_writer" in out


def test_n_too_small_instead_of_a_degenerate_interval(capsys, monkeypatch, three):
    """Three samples: the sign-flip test cannot reach p < 0.05 (2/8 at best) and a bootstrap
    over three has ten distinct resamples: no interval, "n too small", and within noise
    agrees with p 0.250."""
    out = _cli(capsys, monkeypatch, three)
    assert _compared(out) == [
        ["single", "4k", "S_l", "+0.0", "n too small", "1.000", "yes"],
        ["", "4k", "S_c", "-30.0", "n too small", "0.250", "yes"],
        ["", "4k", "S_q", "+0.0", "n too small", "1.000", "yes"],
    ]
    flat = " ".join(out.split())
    assert "no intervals (given from 6 samples on)" in flat and "[" not in flat.split("Paired")[0]
    rows = list(csv.DictReader(io.StringIO(_cli(capsys, monkeypatch, three, "--format", "csv"))))
    assert all(r["s_c_low"] == "" for r in rows)
    with Warehouse(three / "lilo.duckdb", score_columns()) as wh:
        assert wh.rows(
            "SELECT difference, difference_low, within_noise FROM cell_intervals "
            "WHERE variant = 'single' AND score = 'length'"
        ) == [{"difference": 0.0, "difference_low": None, "within_noise": True}]
        text = wh.con.execute(
            "SELECT difference::VARCHAR FROM cell_intervals WHERE score = 'length'"
        ).fetchall()
    assert ("-0.0",) not in text


def test_intervals_in_every_format(capsys, monkeypatch, six):
    monkeypatch.setenv("COLUMNS", "250")
    assert main(["leaderboard", "--data-dir", str(six)]) == 0
    wide = capsys.readouterr().out
    assert _interval(_values("single", 6, 1)) in wide  # beside its score
    rows = list(csv.DictReader(io.StringIO(_cli(capsys, monkeypatch, six, "--format", "csv"))))
    single = next(r for r in rows if r["method"] == "single")
    assert _interval(_values("single", 6, 1)) == (
        f"{float(single['s_c']):.1f} [{float(single['s_c_low']):.1f}, "
        f"{float(single['s_c_high']):.1f}]"
    )
    assert single["overall_s_c_low"] == single["s_c_low"]  # one length: Overall is it
    doc = json.loads(_cli(capsys, monkeypatch, six, "--format", "json"))
    assert {"s_l_low", "s_q_high", "overall_s_q_high"} <= set(doc["rows"][0])
    (paired,) = [p for p in doc["paired"] if p["score"] == "consistency"]
    assert (paired["difference"], paired["p_value"], paired["within_noise"]) == (
        -30.0,
        2 / 64,
        False,
    )
    md = _cli(capsys, monkeypatch, six, "--format", "markdown")
    assert f"| single | {_interval([100.0] * 6)} | {_interval(_values('single', 6, 1))} |" in md
    interval = _difference_interval("single", 1, 6)
    assert f"|  | 4k | S_c | -30.0 | {interval} | 0.031 | no |" in md
    assert "-0.0" not in wide + md


def test_a_stacked_table_rules_off_each_method_once():
    """The paired comparison has an Overall row per score: one rule per method, under its
    last row, not under each Overall row."""
    from rich.console import Console

    from lilo.flows.cli.leaderboard import _table

    body = [
        ["single", "4k", "S_l", "+1.0"],
        ["", "Overall", "S_l", "+1.0"],
        ["", "Overall", "S_c", "+2.0"],
        ["agentwrite", "4k", "S_l", "+0.0"],
        ["", "Overall", "S_c", "+0.0"],
    ]
    console = Console(width=100, record=True, file=io.StringIO())
    console.print(_table("t", "", ["method", "length", "score", "diff"], body, wrap=True, names=3))
    lines = console.export_text().splitlines()
    rules = [i for i, line in enumerate(lines) if line.startswith("├")]
    assert len(rules) == 1 and lines[rules[0] + 1].startswith("│ agentwrite")


def test_the_paired_comparison_is_a_table_at_80_columns_and_a_list_at_50(data_dir):
    """A table at 80 columns (its long method name folded); at 50 each method is named over
    its rows. No number is cut either way."""
    import dataclasses

    import duckdb
    import pandas as pd
    from rich.console import Console

    from lilo.flows.cli.leaderboard import print_board
    from lilo.tasks.leaderboard import Board
    from lilo.warehouse.queries.results import read_board

    con = duckdb.connect(str(data_dir / "published" / "lilo.duckdb"), read_only=True)
    try:
        board = Board.of(read_board(con))
    finally:
        con.close()
    paired = pd.DataFrame(
        [
            {"variant": v, "reference": "single", "target_words": n, "backbone": "offline:m",
             "score": score, "n": 3, "difference": -100.0, "ci_low": -100.0, "ci_high": -100.0,
             "p_value": 0.25, "within_noise": False}
            for v in (LONG,)
            for n in (4000, 8000, 0)
            for score in ("length", "consistency", "quality")
        ]
    )  # fmt: skip
    board = dataclasses.replace(board, paired=paired)
    shown = {}
    for width in (80, 50):
        console = Console(width=width, record=True, file=io.StringIO())
        print_board(board, console)
        shown[width] = console.export_text()
        assert "…" not in shown[width]
        assert max(len(line) for line in shown[width].splitlines()) <= width
        assert shown[width].count("[-100.0, -100.0]") == 9
    comparison = shown[80][shown[80].index("Paired with") :]
    assert "┃ within" in comparison and "│ no " in comparison  # a table
    narrow = shown[50][shown[50].index("Paired with") :]
    assert "│" not in narrow and LONG in "".join(narrow.split())
