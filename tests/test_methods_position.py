"""The three literature methods end to end on one synthetic triplet at 4,000 words, offline,
with the reader's neglect on (DESIGN §15): each runs, records its structure, is measured
by `bench.methods_position`, and appears on the leaderboard, position curve and cost view
by its variant. The full table is `python -m bench.methods_position`."""

from __future__ import annotations

import pytest

from bench.methods_position import BINS, run
from flows._load import load_generations
from tasks.records import Generation, ScoreRow
from warehouse import Warehouse
from warehouse.results import Expected, materialize_results

NEW = ("markov_cluster", "rapid", "longscope")


@pytest.fixture(scope="module")
def results(tmp_path_factory):
    return run(tmp_path_factory.mktemp("methods"), NEW, (4000,), 1.0, score=False, preset="quick")


def test_each_method_writes_from_its_recorded_structure(results):
    assert set(results) == {("markov_cluster", 4000), ("rapid", 4000), ("longscope[quick]", 4000)}
    for row in results.values():
        assert row["words"] > 1000 and row["calls"] > 5 and row["tokens_in"] > 0
        assert all(0.0 <= row[f"recall_{b}"] <= 1.0 for b in BINS)
    markov = results["markov_cluster", 4000]["generation"].structure
    assert sorted(markov["path"]) == list(range(markov["k"])) and markov["path_exact"]
    assert -1.0 <= results["markov_cluster", 4000]["kendall_tau"] <= 1.0
    assert sum(markov["section_words"]) == 4000
    rapid = results["rapid", 4000]["generation"].structure
    assert rapid["order_acyclic"] and sorted(rapid["order"]) == sorted(
        map(int, rapid["dependencies"])
    )
    scope = results["longscope[quick]", 4000]["generation"]
    assert scope.structure["skeleton"].startswith("# ") and len(scope.structure["layers"]) == 1
    assert scope.method_args["layers"] == 1 and scope.variant == "longscope[quick]"


def test_structure_is_stored_and_the_views_show_each_variant(results, tmp_path):
    wh = Warehouse(tmp_path / "w.duckdb")
    gens: list[Generation] = [r["generation"] for r in results.values()]
    extra = {"run_id": "r", "config_hash": "h", "code_version": "c"}
    wh.upsert("fct_generations", gens, ("generation_id",), extra=extra)
    back = {g.method: g for g in load_generations(wh, "true", [])}
    assert back["rapid"].structure == gens[1].structure
    scores = [
        ScoreRow(g.generation_id, name, 50.0)
        for g in gens
        for name in ("length", "consistency", "quality", "single_pos1", "single_pos2")
    ]
    wh.upsert("fct_scores", scores, ("generation_id", "score"), extra={"run_id": "r"})
    backbone = gens[0].backbone
    materialize_results(wh, "v1", "r1", Expected(["s1"], list(NEW), [4000], backbone))
    variants = {"markov_cluster", "rapid", "longscope[quick]"}
    for view in ("leaderboard", "position_curve", "cost"):
        rows = wh.rows(f"SELECT * FROM {view}")
        assert {r.get("variant", r["method"]) for r in rows} == variants, view
