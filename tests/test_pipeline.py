"""The whole pipeline as Prefect runs it: the synthetic corpus fetched through the real `arxiv`
and `requests` clients from the loopback mirror, into a real DuckDB file, then run again.

Its vectors come from a loopback embeddings server (the `openai` backend, a bag of words:
tests/conftest.py `loopback_embeddings`): nothing below depends on what they are, and the
local model's 30 s of CPU on these papers buys no check. The local model runs through the
flows in the manual-review demo (tests/conftest.py), and with each method that embeds in
tests/test_compress.py, tests/test_position_analysis.py (RAL-Writer) and
tests/test_methods_position.py."""

from __future__ import annotations

import re

import duckdb
import pytest

from lilo.flows._run import RunFailed
from lilo.flows.pipeline import lilo_pipeline
from lilo.tasks.config import Settings
from lilo.tasks.config_loading import flow_parameters
from lilo.tasks.errors import InputError
from lilo.tasks.synthetic import Mirror, write_corpus

STAGE_TABLES = (
    "stg_raw_sources",
    "dim_surveys",
    "dim_survey_references",
    "dim_citation_groups",
    "dim_papers",
    "quarantine",
    "validation_results",
    "dim_samples",
    "fct_qa_pairs",
    "fct_generations",
    "fct_scores",
    "llm_cache",
    "fct_llm_calls",
    "res_versions",
    "res_scores",
)
METHODS = ["single", "agentwrite", "compress", "ral_writer"]
TARGETS = [1000, 2000]


def _counts(path) -> dict[str, int]:
    con = duckdb.connect(str(path), read_only=True)
    try:
        return {
            t: con.execute(f"SELECT count(*) FROM {t}").fetchall()[0][0]
            for t in (*STAGE_TABLES, "runs")
        }
    finally:
        con.close()


def _results(published: str) -> tuple[list[tuple], list[tuple]]:
    """The result versions and the default leaderboard of a published copy."""
    con = duckdb.connect(published, read_only=True)
    try:
        versions = con.execute("SELECT version, published FROM res_versions").fetchall()
        board = con.execute("SELECT * FROM leaderboard ORDER BY ALL").fetchall()
    finally:
        con.close()
    return versions, board


def _as_the_cli_passes(settings: dict) -> dict:
    """Settings as `lilo run` hands them to the flow it runs in itself: its folders and
    endpoints as references only this process resolves (a deployment run's parameters
    may not set them)."""
    return flow_parameters(Settings().with_overrides(settings))


@pytest.fixture(scope="module")
def demo(tmp_path_factory, prefect_harness, loopback_embeddings):
    root = tmp_path_factory.mktemp("pipeline")
    manifest = write_corpus(root / "corpus")
    surveys = [i.arxiv_id for i in manifest.items if i.role == "survey"]
    with Mirror(root / "corpus") as mirror:
        overrides = _as_the_cli_passes(
            {
                "data_dir": str(root / "data"),
                "arxiv.api_url": mirror.api_url,
                "arxiv.eprint_url": mirror.eprint_url,
                "arxiv.delay_s": 0.0,
                # Every stage, method and length on one sample: all the tests below need.
                "samples.target_samples": 1,
            }
        )
        first = lilo_pipeline(
            surveys=surveys, methods=METHODS, target_words=TARGETS, overrides=overrides
        )
        after_first = _counts(first["db_path"])
        embedded = len(loopback_embeddings.requests)
        log = list(mirror.requests_log)
        agents = set(mirror.user_agents)
        second = lilo_pipeline(
            surveys=surveys, methods=METHODS, target_words=TARGETS, overrides=overrides
        )
        after_second = _counts(second["db_path"])
    asked = (embedded, len(loopback_embeddings.requests) - embedded)
    return manifest, first, second, after_first, after_second, log, agents, asked


def test_fetches_through_the_real_clients(demo):
    manifest, first, *_, log, agents, _ = demo
    paths = [path for path, status, _ in log]
    assert any(p.startswith("/api/query") for p in paths)  # the `arxiv` client's Atom query
    fetched = {p.removeprefix("/e-print/") for p in paths if p.startswith("/e-print/")}
    assert fetched == {i.arxiv_id for i in manifest.items}  # `requests`, each e-print once
    assert sum(p.startswith("/e-print/") for p in paths) == len(manifest.items)
    assert any(a.startswith("lilo/") for a in agents)


def test_every_stage_wrote_rows_and_hostile_items_are_quarantined(demo):
    manifest, first, _, counts, *_ = demo
    assert first["status"] == "completed"
    assert {t: n for t, n in counts.items() if n == 0} == {}
    con = duckdb.connect(first["db_path"], read_only=True)
    quarantined = dict(
        con.execute("SELECT item_id, reason FROM quarantine WHERE stage = 'clean'").fetchall()
    )
    board = con.execute("SELECT method, target_words, s_l, s_c, s_q FROM leaderboard").fetchall()
    run = con.execute(
        "SELECT llm_calls_made, llm_calls_cached, config_hash, code_version, backbone "
        "FROM runs WHERE run_id = ?",
        [first["run_id"]],
    ).fetchall()[0]
    con.close()
    expected = {i.arxiv_id: i.expected_reason for i in manifest.items if i.hostile}
    assert len(expected) == 4 and quarantined == expected
    assert {(m, t) for m, t, *_ in board} == {(m, t) for m in METHODS for t in TARGETS}
    assert all(0 <= v <= 100 for row in board for v in row[2:])
    # each score measured something (an all-zero board fails) and tells the cells apart
    for column in zip(*(row[2:] for row in board), strict=True):
        assert max(column) > 0 and len(set(column)) > 1, column
    made, cached, config_hash, code_version, backbone = run
    # a fresh data_dir: the cache serves only the run's own repeated requests (49 of 338)
    assert (made, cached) == (289, 49) and config_hash and code_version
    assert backbone == "offline:offline-extractive-v1"


def test_second_run_makes_no_calls_and_adds_only_its_run_record(demo):
    _, first, second, after_first, after_second, *_, (embedded, embedded_again) = demo
    assert second["status"] == "completed"
    assert second["llm_calls_made"] == 0 and second["rows_added"] == {}
    assert embedded > 0 and embedded_again == 0  # every vector from the cache
    assert after_second == {**after_first, "runs": after_first["runs"] + 1}


def test_the_published_copy_has_the_results_and_each_run_s_final_status(demo):
    _, first, second, *_ = demo
    con = duckdb.connect(second["published_path"], read_only=True)
    runs = dict(
        con.execute("SELECT run_id, status FROM runs WHERE finished_at IS NOT NULL").fetchall()
    )
    board = con.execute("SELECT count(*) FROM leaderboard").fetchall()[0][0]
    con.close()
    assert runs == {first["run_id"]: "completed", second["run_id"]: "completed"}
    assert board == len(METHODS) * len(TARGETS)


def test_a_survey_that_failed_to_download_does_not_freeze_an_empty_dataset(
    tmp_path, prefect_harness, loopback_embeddings
):
    manifest = write_corpus(tmp_path / "corpus")
    (survey,) = [i.arxiv_id for i in manifest.items if i.role == "survey"]
    with Mirror(tmp_path / "corpus") as mirror:
        overrides = _as_the_cli_passes(
            {
                "data_dir": str(tmp_path / "data"),
                "arxiv.api_url": mirror.api_url,
                "arxiv.eprint_url": mirror.eprint_url,
                "arxiv.delay_s": 0.0,
                "arxiv.backoff_s": 0.0,
                "arxiv.retries": 1,
            }
        )
        mirror.inject(f"/e-print/{survey}", [503, 503])
        run = dict(surveys=[survey], methods=["single"], target_words=[500], overrides=overrides)
        with pytest.raises(RunFailed, match=f"no survey could be read: {survey} .fetch_failed"):
            lilo_pipeline(**run)
        up = lilo_pipeline(**run)
        published = up["published_path"]
        before = _results(published)
        # Asked for surveys it cannot read, or that are not the version's: the run fails
        # and publishes nothing new.
        with pytest.raises(RunFailed, match="no survey could be read: 2601.99999 .fetch_failed"):
            lilo_pipeline(**{**run, "surveys": ["2601.99999"], "target_words": [400]})
        with pytest.raises(RunFailed, match=f"was built from surveys {survey}, not"):
            lilo_pipeline(**{**run, "surveys": [survey, "2601.99999"], "target_words": [400]})
    assert up["status"] == "completed"
    assert up["rows_added"]["dim_samples"] == 3 and up["rows_added"]["fct_generations"] == 3
    assert _results(published) == before
    con = duckdb.connect(published, read_only=True)
    statuses = [r[0] for r in con.execute("SELECT status FROM runs ORDER BY started_at").fetchall()]
    con.close()
    assert statuses == ["failed", "completed", "failed", "failed"]
    with pytest.raises(InputError, match="no surveys"):
        lilo_pipeline(surveys=[], overrides=overrides)


def test_the_run_s_results_are_artifacts_of_the_pipeline_s_own_flow_run(demo):
    from prefect import get_client
    from prefect.client.schemas.filters import ArtifactFilter, ArtifactFilterFlowRunId

    _, first, *_ = demo
    with get_client(sync_client=True) as client:
        artifacts = client.read_artifacts(
            artifact_filter=ArtifactFilter(
                flow_run_id=ArtifactFilterFlowRunId(any_=[first["run_id"]])
            )
        )
    keys = [a.key for a in artifacts]
    assert {"run-record", "run-summary", "leaderboard", "results", "position-curve",
            "position-curve-plot", "cost", "failures", "dataset-v1-stats",
            "dataset-v1-surveys"} <= set(keys)  # fmt: skip
    assert len(keys) == len(set(keys)), keys  # each once, though two stages make the stats
    summary = next(a for a in artifacts if a.key == "run-summary")
    assert f"Dataset **{first['dataset_version']}**" in summary.data
    # Every artifact that shows the leaderboard says the scope the warehouse holds.
    boards = [a for a in artifacts if "Leaderboard: dataset" in str(a.data)]
    assert {a.key for a in boards} >= {"run-summary", "results"}
    for artifact in boards:
        assert "Scope: not recorded" not in str(artifact.data), artifact.key
        assert re.search(r"Scope: \d+ of \d+ samples of dataset", str(artifact.data)), artifact.key
