"""LLM outages and unusable judge replies through the real OpenAI backend against a loopback
endpoint: the QA and score stages finish, the item is quarantined with why, and the next
run (endpoint healthy) retries it and clears the quarantine row (docs/design.md §6, §8)."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from collections.abc import Iterator
from datetime import datetime

import pytest
from artifacts import read_artifacts
from llm_server import PAIRS, PAPER, LLMServer

from lilo.flows.qa import qa_flow
from lilo.flows.score import score_flow
from lilo.tasks.config_loading import flow_parameters
from lilo.tasks.prompt_packs import lilo_pack
from lilo.tasks.records import Generation, PaperText, QAPair, Sample
from lilo.warehouse import Warehouse

SAMPLE = Sample("s1", "v1", ("2601.00001",), "Kernels", "2601.00000", 40, "command")
GENERATION = Generation("g1", "s1", "single", {}, 100, "openai:scripted", "KernelForge: 0.635.", 3)


def _healthy(prompt: str, n: int, bad_aspect: str = "", bad_grades: bool = False) -> str:
    """The model of every stage: QA pairs, filter verdicts, judge answers and grades."""
    if prompt.startswith("Your reply could not be used"):
        return "Still no."
    if "Decide whether" in prompt:
        return json.dumps({"keep": True, "reason": "specific"})
    if "<gold>" in prompt:
        return "no idea" if bad_grades else json.dumps({"reason": "matches", "score": 1})
    if '"checklists":' in prompt:
        bad = lilo_pack().checklist[bad_aspect][0].question if bad_aspect else None
        if bad and bad in prompt:
            return "I'd rather not grade this."
        ids = sorted(set(re.findall(r'"checklist_id": (\d+)', prompt)), key=int)
        items = [{"checklist_id": i, "reason": "partly", "evaluation_score": 0.5} for i in ids]
        return json.dumps(items)
    if "<summary>" in prompt and "<question>" in prompt:
        return "A test RMSE of 0.635."
    return json.dumps(PAIRS)


@pytest.fixture
def server() -> Iterator[LLMServer]:
    with LLMServer() as llm:
        llm.respond = _healthy
        yield llm


@pytest.fixture
def settings(tmp_path, server):
    settings = server.settings(
        tmp_path, **{"qa.quota_single": 2, "qa.quota_cross": 0, "qa.max_rounds": 1}
    )
    paper = PaperText("2601.00001", "KernelForge", PAPER, 40, 60, "main.tex", "t", "s", "c")
    with Warehouse(settings.db_path) as wh:
        wh.upsert("dim_papers", [paper], ("paper_id",), extra={"run_id": "seed"})
        wh.upsert("dim_samples", [SAMPLE], ("sample_id",), extra={"run_id": "seed"})
    return settings


def _seed_scoring(settings) -> None:
    pairs = [
        QAPair(f"q{i}", "s1", "single", SAMPLE.paper_ids, p["question"], p["answer"],
               tuple(p["evidence"]), "approved", 1, "auto", "", "p1", "openai:scripted")
        for i, p in enumerate(PAIRS)
    ]  # fmt: skip
    extra = {"run_id": "seed", "config_hash": "h", "code_version": "c"}
    with Warehouse(settings.db_path) as wh:
        wh.upsert("fct_qa_pairs", pairs, ("qa_id",), extra={"run_id": "seed"})
        wh.upsert("fct_generations", [GENERATION], ("generation_id",), extra=extra)


def _read(settings, query: str) -> list[dict]:
    with Warehouse(settings.db_path) as wh:
        return wh.rows(query)


def test_qa_outage_quarantines_the_sample_and_the_next_run_retries_it(
    prefect_harness, server, settings
):
    server.failing = 500
    qa_flow(settings, "r1")  # the stage completes
    assert _read(settings, "SELECT count(*) AS n FROM fct_qa_pairs") == [{"n": 0}]
    [held] = _read(settings, "SELECT item_id, stage, reason, detail FROM quarantine")
    assert (held["item_id"], held["stage"], held["reason"]) == ("s1", "qa", "llm_error")
    assert "failed for qa_single" in held["detail"]

    server.failing = 0
    qa_flow(settings, "r2")
    approved = _read(settings, "SELECT count(*) AS n FROM fct_qa_pairs WHERE status='approved'")
    assert approved == [{"n": 2}]
    assert _read(settings, "SELECT * FROM quarantine") == []


def test_qa_leaves_the_warehouse_free_while_the_llm_works_and_logs_its_calls(
    prefect_harness, server, settings
):
    free: list[bool] = []
    opener = f"import duckdb; duckdb.connect({str(settings.db_path)!r}).close()"

    def respond(prompt: str, n: int) -> str:
        if not free:  # another process can open the warehouse during the first call
            free.append(subprocess.run([sys.executable, "-c", opener]).returncode == 0)
        return _healthy(prompt, n)

    server.respond = respond
    report = qa_flow(settings, "r1")
    assert free == [True]
    [ledger] = _read(settings, "SELECT count(*) AS n FROM fct_llm_calls WHERE stage = 'qa'")
    assert ledger["n"] == report.llm_made + report.llm_cached > 0
    assert not list(settings.data_dir.glob("runs/*/*.jsonl"))  # the call log was folded in
    approved = _read(settings, "SELECT count(*) AS n FROM fct_qa_pairs WHERE status='approved'")
    assert approved == [{"n": 2}]


def test_score_outage_quarantines_the_generation_and_the_next_run_scores_it(
    prefect_harness, server, settings
):
    _seed_scoring(settings)
    server.failing = 500
    score_flow(settings, "r1")
    assert _read(settings, "SELECT count(*) AS n FROM fct_scores") == [{"n": 0}]  # not even S_l
    [held] = _read(settings, "SELECT item_id, stage, reason FROM quarantine")
    assert held == {"item_id": "g1", "stage": "score", "reason": "llm_error"}

    server.failing = 0
    score_flow(settings, "r2")
    scores = {r["score"]: r["value"] for r in _read(settings, "SELECT * FROM fct_scores")}
    assert scores["consistency"] == 100.0 and scores["quality"] == 50.0
    assert scores["length"] < 100.0
    assert _read(settings, "SELECT * FROM quarantine") == []


def test_unusable_judgments_are_left_out_of_the_means_and_reported(
    prefect_harness, server, settings
):
    _seed_scoring(settings)
    server.respond = lambda prompt, n: _healthy(prompt, n, bad_aspect="structure", bad_grades=True)
    score_flow(settings, "r1")
    rows = {r["score"]: r for r in _read(settings, "SELECT * FROM fct_scores")}
    # Every consistency grade failed: no S_c rows at all, rather than a silent 0.
    assert not [name for name in rows if "consistency" in name or name.startswith("single_")]
    assert "quality_structure" not in rows
    quality = rows["quality"]
    assert quality["value"] == 50.0  # the mean of the 7 graded aspects, not dragged down
    [failed] = json.loads(quality["detail"])["failed"]
    assert failed["aspect"] == "structure" and failed["raw"] == "Still no."  # after the retry
    [held] = _read(settings, "SELECT item_id, stage, reason, detail FROM quarantine")
    assert (held["item_id"], held["stage"], held["reason"]) == ("g1", "score", "judge_unusable")
    assert "quality_structure: unusable judge reply" in held["detail"]
    assert "consistency: all 2 grades unusable" in held["detail"]


def test_endpoint_text_never_becomes_a_script_link_in_an_artifact(
    prefect_harness, server, settings, tmp_path
):
    """An endpoint whose errors hold Markdown links to `javascript:` (and HTML): the run's
    record in the Prefect UI quotes them as text, never as a link or a tag."""
    from prefect import get_client
    from prefect.client.schemas.filters import FlowRunFilter, FlowRunFilterName

    from lilo.flows.pipeline import lilo_run_dataset

    server.failing = 400
    server.error_message = (
        "[open the console](javascript:alert(1)) <img src=x onerror=alert(2)>\n"
        "[log]: javascript:alert(3)\nsee [log]"
    )
    _seed_scoring(settings)
    version = {"dataset_version": "v1", "number": 1, "created_at": datetime(2026, 1, 1),
               "surveys": ["s"], "n_samples": 1, "n_papers": 1, "config_hash": "seed"}  # fmt: skip
    with Warehouse(settings.db_path) as wh:
        wh.upsert("dim_dataset_versions", [version], ("dataset_version",), extra={"run_id": "s"})
    name = f"links-{tmp_path.name}"
    lilo_run_dataset.with_options(flow_run_name=name)(
        "v1", overrides=flow_parameters(settings.with_overrides({"generate.methods": ["single"]}))
    )
    with get_client(sync_client=True) as client:
        (run,) = client.read_flow_runs(
            flow_run_filter=FlowRunFilter(name=FlowRunFilterName(any_=[name]))
        )
    (record,) = [a for a in read_artifacts("run-record") if a.flow_run_id == run.id]
    assert "open the console" in record.data
    assert "](javascript:" not in record.data and "<img" not in record.data
    assert not re.search(r"^ {0,3}\[log\]:", record.data, re.M), record.data
