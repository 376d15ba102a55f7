"""The generate and score stages against a misbehaving endpoint, through the real `openai`
client: with 20% of requests faulty (429 with Retry-After, 500, 503, stalls past the timeout,
dropped connections, JSON cut short, empty content, an HTML page) nothing is lost or counted
twice, every request the endpoint received is in the ledger, every permanent failure is
recorded with its reason and the run ends `partial`; the next run, faults off, completes and
clears them."""

from __future__ import annotations

import re
from collections.abc import Iterator

import pytest
from llm_server import FAULTS, Faults, LLMServer, kernel_samples, seed_samples

from lilo.flows._run import recorded_run
from lilo.flows.generate import generate_flow
from lilo.flows.score import score_flow
from lilo.tasks.synthetic.replies import judge_reply
from lilo.warehouse import Warehouse

SAMPLES = kernel_samples(8)
METHODS, TARGETS = ("single", "agentwrite"), (300,)


def _model(prompt: str, n: int) -> str:
    """Plans, paragraphs, answers, grades and checklists, each in the shape lilo parses;
    a summary names its sample's method (`KernelForgeN`), so that no two prompts match."""
    name = re.search(r"KernelForge\d+", prompt)
    step = re.search(r"step\w* (\d+)", prompt)
    tag = f"{name.group() if name else 'KernelForge'} {step.group(1) if step else ''}"
    return judge_reply(prompt) or f"{tag} reaches a test RMSE of 0.635 on Kin40k. " * 20


@pytest.fixture
def server() -> Iterator[LLMServer]:
    with LLMServer() as llm:
        llm.respond = _model
        yield llm


@pytest.fixture
def settings(tmp_path, server):
    settings = server.settings(
        tmp_path,
        **{
            "llm.retries": 1,
            # Far above a reply's time even on a loaded machine (at 0.5 s, a busy test
            # process answered past it: a reply the server gave and lilo never got).
            "llm.timeout_s": 2.0,
            "llm.concurrency": 4,
            "qa.quota_single": 2,
            "qa.quota_cross": 0,
            "generate.methods": list(METHODS),
            "generate.target_words": list(TARGETS),
            "winrate_against": "",
        },
    )
    seed_samples(settings, SAMPLES)
    return settings


def _run(settings) -> dict:
    with recorded_run(settings, "faults") as run:
        run.stage(generate_flow)
        run.stage(score_flow)
    return run.row


def _rows(settings, query: str, params: list | None = None) -> list[dict]:
    with Warehouse(settings.db_path) as wh:
        return wh.rows(query, params)


def test_faults_lose_nothing_count_nothing_twice_and_the_rerun_clears_them(
    prefect_harness, server, settings
):
    server.faults = Faults(rate=0.2, seed=3, stall_s=2.5)
    faulty = _run(settings)

    assert set(server.faults.counts) == set(FAULTS)  # every kind was served
    generations = _rows(settings, "SELECT generation_id, method, error FROM fct_generations")
    assert len(generations) == len(SAMPLES) * len(METHODS) * len(TARGETS)  # none lost
    failed = [g for g in generations if g["error"]]
    held = _rows(settings, "SELECT item_id, reason, detail FROM quarantine")
    assert failed or held  # this seed makes some failures permanent (past the retry)
    assert all("failed for" in g["error"] for g in failed)
    assert all(h["reason"] == "llm_error" and "failed for" in h["detail"] for h in held)
    unaccounted = _rows(
        settings,
        "SELECT generation_id FROM fct_generations WHERE error = '' AND generation_id NOT IN "
        "(SELECT generation_id FROM fct_scores) AND generation_id NOT IN "
        "(SELECT item_id FROM quarantine)",
    )
    assert unaccounted == []
    made = _rows(
        settings,
        "SELECT key, count(*) AS n FROM fct_llm_calls WHERE run_id = ? AND NOT cached "
        "AND replied GROUP BY key",
        [faulty["run_id"]],
    )
    assert all(r["n"] == 1 for r in made)  # no request answered twice
    assert len(made) == server.answered  # every completion the endpoint gave is in the ledger
    unanswered = _rows(
        settings,
        "SELECT key FROM fct_llm_calls WHERE run_id = ? AND NOT replied",
        [faulty["run_id"]],
    )
    # Every request the endpoint received is in the ledger: each answered one with its
    # reply, each other one (a fault, asked again or failed for good) without.
    received = [r for r in server.requests if r["path"] == "/v1/chat/completions"]
    assert len(made) + len(unanswered) == len(received)
    assert len(unanswered) == len(received) - server.answered > 0
    assert faulty["status"] == "partial"
    assert "failed generations" in faulty["message"] or "llm_error" in faulty["message"]

    server.faults = None
    clean = _run(settings)
    assert clean["status"] == "completed", clean["message"]
    assert _rows(settings, "SELECT * FROM quarantine") == []
    assert _rows(settings, "SELECT * FROM fct_generations WHERE error <> ''") == []
    scored = _rows(
        settings,
        "SELECT generation_id FROM fct_scores WHERE score IN ('length', 'consistency', "
        "'quality') GROUP BY ALL HAVING count(*) = 3",
    )
    assert len(scored) == len(generations)
    assert not list((settings.data_dir / "runs").glob("*/*.jsonl"))  # logs folded
