"""A dataset built end to end from the synthetic corpus through the loopback arXiv mirror:
survey discovery (ids or a query) -> fetch -> references -> clean -> samples, an immutable
numbered dataset version, and its statistics (Prefect artifacts, histogram, `lilo stats`)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import duckdb
import pytest
from artifacts import latest_artifacts

from lilo.flows.cli import main
from lilo.flows.discover import discover_flow
from lilo.tasks.config import Settings
from lilo.tasks.synthetic import SURVEY_ID, Manifest, Mirror, write_corpus


@pytest.fixture(scope="module")
def mirror(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Mirror, Manifest]]:
    root = tmp_path_factory.mktemp("corpus")
    manifest = write_corpus(root)
    with Mirror(root) as served:
        yield served, manifest


def _settings(data_dir: Path, mirror: Mirror, **extra: object) -> Settings:
    return Settings().with_overrides(
        {
            "data_dir": str(data_dir),
            "arxiv.api_url": mirror.api_url,
            "arxiv.eprint_url": mirror.eprint_url,
            "arxiv.delay_s": 0.0,
            "arxiv.backoff_s": 0.01,
            "arxiv.retries": 0,
            **extra,
        }
    )


def _query(settings: Settings, sql: str) -> list[tuple[object, ...]]:
    con = duckdb.connect(str(settings.db_path), read_only=True)
    try:
        return con.execute(sql).fetchall()
    finally:
        con.close()


def _artifact(settings: Settings, key: str) -> object:
    """The artifact `key` of the first discover run in the warehouse (the session's other
    runs make artifacts with the same keys)."""
    run_id = _query(settings, "SELECT run_id FROM runs WHERE flow = 'discover' ORDER BY started_at")
    found = latest_artifacts(key, flow_run=run_id[0][0])
    return found.get(key)


def test_discover_from_a_query_builds_a_numbered_immutable_version(
    prefect_harness: None,
    tmp_path: Path,
    mirror: tuple[Mirror, Manifest],
    capsys: pytest.CaptureFixture[str],
) -> None:
    served, manifest = mirror
    settings = _settings(tmp_path, served)
    found = discover_flow(settings, query='ti:"a survey of"')
    assert (found.kept, found.samples, found.skipped) == ([SURVEY_ID], 3, {})

    rows = _query(settings, "SELECT paper_ids, topic, survey_id FROM dim_samples")
    topic_of = {i.arxiv_id: i.topic for i in manifest.papers}
    assert len(rows) == 3
    for paper_ids, topic, survey_id in rows:
        assert survey_id == SURVEY_ID and {topic_of[p] for p in paper_ids} == {topic}
    hostile = {i.arxiv_id for i in manifest.papers if i.hostile}
    assert not hostile & {p for paper_ids, _, _ in rows for p in paper_ids}
    assert _query(settings, "SELECT dataset_version, number, n_samples FROM dim_dataset_versions")[
        0
    ] == ("v1", 1, 3)

    report = _artifact(settings, "dataset-v1-stats")
    assert report is not None and "3 samples, 9 papers, 1 survey." in report.data
    assert "| eprint | 16 |" in report.data
    table = _artifact(settings, "dataset-v1-surveys")
    assert table is not None and SURVEY_ID in str(table.data)
    assert "![input words per sample](data:image/png;base64," in report.data

    again = discover_flow(settings, survey_ids=[SURVEY_ID])
    assert (again.kept, again.samples) == ([], 3)
    assert _query(settings, "SELECT count(*) FROM dim_samples") == [(3,)]
    runs = _query(settings, "SELECT flow, status FROM runs ORDER BY started_at")
    assert runs == [("discover", "completed"), ("discover", "completed")]

    v2 = _settings(tmp_path, served, dataset_version="v2", **{"samples.target_samples": 2})
    second = discover_flow(v2, survey_ids=["2601.99999", SURVEY_ID, "2601.99998"])
    assert (second.kept, second.samples) == ([SURVEY_ID], 2)
    assert list(second.skipped) == ["2601.99999"]
    fetched = {r[0] for r in _query(settings, "SELECT arxiv_id FROM stg_raw_sources")}
    assert "2601.99998" not in fetched  # the target was reached before it
    assert _query(
        settings, "SELECT dataset_version, number, n_samples FROM dim_dataset_versions ORDER BY 2"
    ) == [("v1", 1, 3), ("v2", 2, 2)]

    assert main(["stats", "--data-dir", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "Dataset v1 (#1): 3 samples, 9 papers, 1 survey" in out
    assert SURVEY_ID in out and "eprint" in out
