"""What calls cost in money: each call in the ledger at its endpoint's price per million
tokens (`llm.prices`, `judge.prices`), 0 from the cache, NULL for a model with no price;
a run's total in `runs.cost`, NULL when any call it made had no price, and the models
without a price said once a run, not once a call."""

from __future__ import annotations

import logging

import pytest
from llm_server import LLMServer

from lilo.flows._run import recorded_run
from lilo.flows._stage import timed_stage
from lilo.flows._stage_writer import StageWriter
from lilo.tasks.config import Settings
from lilo.tasks.llm import make_client, make_judge_client
from lilo.tasks.records import Generation, Sample, ScoreRow
from lilo.tasks.scoring import scored_by
from lilo.warehouse import Warehouse
from lilo.warehouse.results import Expected, materialize_results


def _run(settings: Settings, asks: int) -> str:
    """A run whose generate stage asks the backbone `asks` prompts, each twice (the second
    from the cache), and the judge one; its run id."""
    with recorded_run(settings, "costs") as run:
        with timed_stage("generate", run.run_id) as report:
            with StageWriter(report, settings) as writer:
                generator = make_client(settings, writer.log)
                judge = make_judge_client(settings, writer.log)
                for n in range(asks):
                    for _ in range(2):
                        generator.chat([{"role": "user", "content": f"say {n}"}], purpose="gen")
                judge.chat([{"role": "user", "content": "grade"}], purpose="grade")
            run.add(report)
    return run.run_id


def test_each_call_and_run_carries_its_cost_and_a_model_without_a_price_is_said_once(
    tmp_path, caplog
):
    with LLMServer() as server:
        server.respond = lambda prompt, n: "one two three four"
        endpoint = {"backend": "openai", "base_url": server.base_url, "api_key": "sk-test"}
        priced = {"generator": {"input": 2.0, "output": 8.0}}
        given = {
            "llm": {**endpoint, "model": "generator", "prices": priced},
            "judge": {**endpoint, "model": "judge"},
        }
        with caplog.at_level(logging.WARNING, logger="lilo"):
            first = _run(server.settings(tmp_path, **given), 3)
        unpriced = [r for r in caplog.records if "no price for" in r.getMessage()]
        assert len(unpriced) == 1, "said once a run, not once a call"
        assert "openai:judge" in unpriced[0].getMessage()
        assert "judge.prices" in unpriced[0].getMessage()

        given["judge"]["prices"] = {"judge": {"input": 1.0, "output": 4.0}}
        caplog.clear()
        with caplog.at_level(logging.WARNING, logger="lilo"):
            second = _run(server.settings(tmp_path, **given), 4)
        assert not [r for r in caplog.records if "no price for" in r.getMessage()]

    with Warehouse(tmp_path / "lilo.duckdb") as wh:
        calls = wh.rows(
            "SELECT run_id, model, cached, tokens_in, tokens_out, cost FROM fct_llm_calls "
            "ORDER BY run_id = ?, stage, seq",
            [second],
        )
        runs = dict(wh.con.execute("SELECT run_id, cost FROM runs").fetchall())
    assert any(c["cached"] for c in calls)
    for call in calls:  # a cached call's tokens cost what they did when they were made
        if call["model"] == "judge" and call["run_id"] == first:
            assert call["cost"] is None  # unknown, never 0
        else:
            price = (2.0, 8.0) if call["model"] == "generator" else (1.0, 4.0)
            expected = (call["tokens_in"] * price[0] + call["tokens_out"] * price[1]) / 1e6
            assert call["cost"] == pytest.approx(expected) and expected > 0
    assert runs[first] is None  # one model without a price: the run's cost is unknown
    # The second run made one new generator call (the fourth prompt) and the judge's was
    # cached: its cost is that one call's.
    made = [c["cost"] for c in calls if c["run_id"] == second and not c["cached"]]
    assert len(made) == 1 and runs[second] == pytest.approx(made[0])


def test_the_leaderboard_and_the_cost_view_give_a_cost_per_summary_unknown_when_unpriced(
    tmp_path,
):
    """Per cell, the mean cost of its summaries; NULL, never 0, when one had no price."""
    wh = Warehouse(tmp_path / "w.duckdb")
    samples = [Sample(s, "v1", ("a",), "topic", "sv", 9000, "command") for s in ("s1", "s2")]
    wh.upsert("dim_samples", samples, ("sample_id",), extra={"run_id": "r"})
    made = [
        Generation("g1", "s1", "single", {}, 4000, "openai:m", "text", 1, cost=0.02),
        Generation("g2", "s2", "single", {}, 4000, "openai:m", "text", 1, cost=0.04),
        Generation("g3", "s1", "agentwrite", {}, 4000, "openai:m", "text", 1, cost=0.5),
        Generation("g4", "s2", "agentwrite", {}, 4000, "openai:m", "text", 1, cost=None),
    ]
    extra = {"run_id": "r", "config_hash": "h", "code_version": "c"}
    wh.upsert("fct_generations", made, ("generation_id",), extra=extra)
    scores = [ScoreRow(g.generation_id, s, 50.0) for g in made for s in ("length", "quality")]
    wh.upsert("fct_scores", scores, ("generation_id", "score"), extra={"run_id": "r"})
    expected = Expected(["s1", "s2"], ["single", "agentwrite"], [4000], "openai:m")
    assert materialize_results(wh, "v1", "r1", expected, scored_by=scored_by()) is not None
    board = wh.rows("SELECT method, cost_per_summary FROM leaderboard ORDER BY method")
    view = wh.rows("SELECT method, cost_per_summary FROM cost ORDER BY method")
    for rows in (board, view):
        assert [r["method"] for r in rows] == ["agentwrite", "single"]
        assert rows[0]["cost_per_summary"] is None
        assert rows[1]["cost_per_summary"] == pytest.approx(0.03)
