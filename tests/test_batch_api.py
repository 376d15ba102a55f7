"""Calls that can wait through OpenAI's Batch API (`judge.batch`, tasks/llm/batch.py): one
batch a round, the replies in the cache, a rerun making no call; a run killed while its
batch runs picks the same batch up; failed batches and failed requests asked again by the
next run; the ledger counts batched calls, at the batch price."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
from batch_server import BatchServer  # noqa: E402
from test_llm_failures import PAPER, SAMPLE, _healthy, _seed_scoring  # noqa: E402

from lilo.flows._run import recorded_run  # noqa: E402
from lilo.flows._stage import timed_stage  # noqa: E402
from lilo.flows._stage_writer import StageWriter  # noqa: E402
from lilo.flows._units import run_units  # noqa: E402
from lilo.flows.score import score_flow  # noqa: E402
from lilo.tasks.config import Settings  # noqa: E402
from lilo.tasks.llm import LLMError, make_judge_client  # noqa: E402
from lilo.tasks.records import PaperText  # noqa: E402
from lilo.warehouse import Warehouse  # noqa: E402

PRICE = {"input": 2.0, "output": 8.0}


def _answer_and_grade(work: list[str], settings: Settings, llm: Any, on_done: Any) -> None:
    """Per item a QA-like pair: an answer, then its grade (which feeds on the answer)."""
    for item in work:
        try:
            answer = llm.chat([{"role": "user", "content": f"answer {item}"}], purpose="answer")
            grade = llm.chat([{"role": "user", "content": f"grade {answer}"}], purpose="grade")
            on_done([(item, (answer, grade))])
        except LLMError as exc:
            on_done([(item, str(exc))])


def _answer(work: list[str], settings: Settings, llm: Any, on_done: Any) -> None:
    """Per item one call that feeds no other."""
    for item in work:
        on_done([(item, llm.chat([{"role": "user", "content": f"answer {item}"}], purpose="a"))])


def _settings(data_dir: Path, base_url: str) -> Settings:
    judge = {
        "backend": "openai",
        "base_url": base_url,
        "api_key": "sk-test",
        "model": "judge",
        "retries": 0,
        "batch": True,
        "batch_poll_s": 0.02,
        "prices": {"judge": PRICE},
        "stream": False,
    }
    return Settings(data_dir=data_dir).with_overrides({"judge": judge})


def _stage(settings: Settings, items: list[str], fan: Any = _answer_and_grade) -> dict[str, Any]:
    """One recorded run of a stage whose units are `items`; each unit's result."""
    results: dict[str, Any] = {}
    with recorded_run(settings, "batch") as run:
        with timed_stage("score", run.run_id) as report:
            with StageWriter(report, settings) as writer:
                run_units(
                    "score",
                    fan,
                    make_judge_client,
                    items,
                    settings,
                    writer.log,
                    lambda done: results.update(done),
                    batchable=lambda _: True,
                )
            run.add(report)
    return results


def _calls(data_dir: Path) -> list[dict[str, Any]]:
    with Warehouse(data_dir / "lilo.duckdb") as wh:
        return wh.rows(
            "SELECT r.started_at, c.purpose, c.cached, c.batched, c.tokens_in, c.tokens_out, "
            "c.cost FROM fct_llm_calls c JOIN runs r USING (run_id) ORDER BY r.started_at, seq"
        )


def test_one_batch_a_round_lands_in_the_cache_and_a_rerun_makes_no_call(tmp_path, prefect_harness):
    with BatchServer() as server:
        settings = _settings(tmp_path, server.base_url)
        first = _stage(settings, ["a", "b", "c"])
        assert first["a"] == ("echo: answer a", "echo: grade echo: answer a")
        # The answers in one batch, their grades (which feed on them) in a second.
        assert server.counts["POST /v1/batches"] == 2
        assert server.counts["POST /v1/files"] == 2
        calls = _calls(tmp_path)
        assert len(calls) == 6 and all(c["batched"] and not c["cached"] for c in calls)
        for call in calls:  # half the endpoint's price
            half = (call["tokens_in"] * 1.0 + call["tokens_out"] * 4.0) / 1e6
            assert call["cost"] == pytest.approx(half) and half > 0

        assert _stage(settings, ["a", "b", "c"]) == first
        assert server.counts["POST /v1/batches"] == 2, "the rerun sent nothing"
        again = _calls(tmp_path)[6:]
        assert len(again) == 6 and all(c["cached"] and not c["batched"] for c in again)


@pytest.mark.parametrize("mode", ["expired", "failed", "partial"])
def test_failed_batches_and_requests_fail_their_units_and_the_next_run_asks_again(tmp_path, mode):
    with BatchServer() as server:
        server.mode = mode
        settings = _settings(tmp_path, server.base_url)
        first = _stage(settings, ["a", "fail b"])
        failed = ["fail b"] if mode == "partial" else ["a", "fail b"]
        for item in failed:
            assert "batch request failed" in first[item]
            assert "the next run asks it again" in first[item]
        if mode == "partial":
            assert first["a"] == ("echo: answer a", "echo: grade echo: answer a")
        server.mode = "completed"
        second = _stage(settings, ["a", "fail b"])
        assert second["fail b"] == ("echo: answer fail b", "echo: grade echo: answer fail b")


def test_a_run_killed_while_its_batch_runs_picks_the_same_batch_up(
    tmp_path, prefect_harness, used_prefect_home
):
    home = used_prefect_home(tmp_path / "prefect-home")
    with BatchServer() as server:
        server.hold = True
        env = {**os.environ, "PREFECT_HOME": str(home)}
        command = [sys.executable, __file__, str(tmp_path / "data"), server.base_url]
        child = subprocess.Popen(command, env=env)
        try:
            deadline = time.monotonic() + 240
            while server.counts["GET /v1/batches/{id}"] < 3:  # in_progress, and held
                assert child.poll() is None and time.monotonic() < deadline
                time.sleep(0.05)
        finally:
            child.send_signal(signal.SIGKILL)
            child.wait()
        assert server.counts["POST /v1/batches"] == 1
        server.hold = False
        items = [f"item {n}" for n in range(5)]
        results = _stage(_settings(tmp_path / "data", server.base_url), items, _answer)
        assert results == {item: f"echo: answer {item}" for item in items}
        assert server.counts["POST /v1/batches"] == 1, "one batch submitted in all"
        assert server.counts["POST /v1/files"] == 1
        made = [c for c in _calls(tmp_path / "data") if not c["cached"]]
        assert len(made) == 5 and all(c["batched"] for c in made)
        assert sum(c["cost"] for c in made) == pytest.approx(
            sum(c["tokens_in"] * 1.0 + c["tokens_out"] * 4.0 for c in made) / 1e6
        )


def test_the_score_stage_judges_through_batches_and_its_rerun_asks_nothing(
    tmp_path, prefect_harness
):
    with BatchServer() as server:
        server.respond = _healthy
        settings = _settings(tmp_path, server.base_url).with_overrides(
            {"llm": {"backend": "openai", "base_url": server.base_url, "api_key": "sk-test",
                     "model": "scripted"},
             "qa": {"quota_single": 2, "quota_cross": 0, "max_rounds": 1}}
        )  # fmt: skip
        paper = PaperText("2601.00001", "KernelForge", PAPER, 40, 60, "main.tex", "t", "s", "c")
        with Warehouse(settings.db_path) as wh:
            wh.upsert("dim_papers", [paper], ("paper_id",), extra={"run_id": "seed"})
            wh.upsert("dim_samples", [SAMPLE], ("sample_id",), extra={"run_id": "seed"})
        _seed_scoring(settings)
        first = score_flow(settings, "r1")
        batches = server.counts["POST /v1/batches"]
        # The checklist and the QA answers in one batch, the answers' grades in a second.
        assert batches == 2 and first.llm_made == server.answered > 0
        with Warehouse(settings.db_path) as wh:
            scores = {r["score"]: r["value"] for r in wh.rows("SELECT * FROM fct_scores")}
            made = wh.rows("SELECT batched FROM fct_llm_calls WHERE NOT cached")
        assert scores["quality"] == 50.0 and scores["consistency"] == 100.0
        assert len(made) == server.answered and all(c["batched"] for c in made)
        with Warehouse(settings.db_path) as wh:
            wh.con.execute("DELETE FROM fct_scores")  # scored again: from the cache alone
        again = score_flow(settings, "r2")
        assert again.llm_made == 0 and again.llm_cached > 0
        assert server.counts["POST /v1/batches"] == batches


if __name__ == "__main__":  # the run the test above kills while its batch runs
    data_dir, base_url = Path(sys.argv[1]), sys.argv[2]
    _stage(_settings(data_dir, base_url), [f"item {n}" for n in range(5)], _answer)
