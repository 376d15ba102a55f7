"""The generate and score stages on Dask (`runner.kind = "dask"`, a 2-worker LocalCluster)
write the same generations, scores and LLM call ledger as on the default thread runner: the
units run in other processes, return their records and calls, and the flow alone writes."""

from __future__ import annotations

import pytest
from llm_server import kernel_samples, seed_samples
from pydantic import ValidationError

from lilo.flows.generate import generate_flow
from lilo.flows.score import score_flow
from lilo.tasks.config_loading import load_settings
from lilo.warehouse import Warehouse

SAMPLES = kernel_samples(4)


def _settings(data_dir, **overrides):
    settings = load_settings(
        None,
        {
            "data_dir": str(data_dir),
            "qa.quota_single": 2,
            "qa.quota_cross": 0,
            "generate.methods": ["single", "agentwrite"],
            "generate.target_words": [300],
            **overrides,
        },
    )
    seed_samples(settings, SAMPLES, repeat=3)
    return settings


def _tables(settings) -> dict[str, list[dict]]:
    """What the stages wrote, less run ids, latencies and the order calls were logged in."""
    with Warehouse(settings.db_path) as wh:
        return {
            "generations": wh.rows(
                "SELECT * EXCLUDE (run_id, latency_s) FROM fct_generations ORDER BY generation_id"
            ),
            "scores": wh.rows("SELECT * EXCLUDE (run_id) FROM fct_scores ORDER BY ALL"),
            "calls": wh.rows(
                "SELECT stage, key, backend, model, purpose, cached, tokens_in, tokens_out "
                "FROM fct_llm_calls ORDER BY ALL"
            ),
            "cache": wh.rows("SELECT key, response FROM llm_cache ORDER BY key"),
        }


@pytest.mark.slow  # a Dask cluster of worker processes, and the same run on threads
def test_generate_and_score_on_a_local_dask_cluster_write_what_the_thread_runner_writes(
    tmp_path, prefect_harness
):
    threads = _settings(tmp_path / "threads")
    dask = _settings(
        tmp_path / "dask",
        **{"runner.kind": "dask", "runner.dask_workers": 2, "runner.batch_units": 2},
    )
    assert threads.config_hash() == dask.config_hash()  # where units run is not a result

    for settings in (threads, dask):
        generate_flow(settings, "r1")
        score_flow(settings, "r1")

    by_threads, by_dask = _tables(threads), _tables(dask)
    assert len(by_dask["generations"]) == len(SAMPLES) * 2  # every unit, none twice
    assert not any(g["error"] for g in by_dask["generations"])
    assert by_dask["scores"] and by_dask["calls"]
    assert {c["stage"] for c in by_dask["calls"]} == {"generate", "score"}
    for table, rows in by_threads.items():
        assert by_dask[table] == rows, table
    assert not list((dask.data_dir / "runs").glob("*/*.jsonl"))  # the call logs were folded


def test_runner_settings_come_from_the_environment_and_are_checked(monkeypatch):
    monkeypatch.setenv("LILO_RUNNER__KIND", "dask")
    monkeypatch.setenv("LILO_RUNNER__DASK_ADDRESS", "tcp://10.0.0.5:8786")
    runner = load_settings().runner
    assert (runner.kind, runner.dask_address) == ("dask", "tcp://10.0.0.5:8786")
    with pytest.raises(ValidationError, match="not a Dask scheduler address"):
        load_settings(None, {"runner.dask_address": "10.0.0.5"})
    with pytest.raises(ValidationError, match="set runner.kind=dask"):
        load_settings(None, {"runner.kind": "threads"})
    with pytest.raises(ValidationError, match="runner.kind"):
        load_settings(None, {"runner.kind": "spark", "runner.dask_address": ""})
