"""The clean flow across cleaner versions: a paper the new cleaner rejects leaves dim_papers
(samples never see its old text), and a later cleaner retries it and clears its quarantine."""

from __future__ import annotations

import tarfile
from pathlib import Path

import pytest
from conftest import PAPERS

from lilo.flows._load import load_papers
from lilo.flows.clean import clean_flow
from lilo.tasks.config import Settings
from lilo.tasks.records import RawSource
from lilo.warehouse import Warehouse

IDS = {"2401.00001": "celerite-scalable-gp", "2401.00002": "deep-gp-pathologies"}


def _sources(tmp_path: Path) -> list[RawSource]:
    raws = []
    for arxiv_id, name in IDS.items():
        archive = tmp_path / f"{name}.tar.gz"
        with tarfile.open(archive, "w:gz") as tar:
            tar.add(PAPERS / name, arcname=".")
        raws.append(RawSource(arxiv_id, name, str(archive), archive.stat().st_size, "tar.gz"))
    return raws


def _bump(monkeypatch: pytest.MonkeyPatch, version: str) -> None:
    for module in ("lilo.tasks.clean", "lilo.flows.clean"):
        monkeypatch.setattr(f"{module}.CLEANER_VERSION", version)


def _state(settings: Settings) -> tuple[set[str], dict[str, str]]:
    with Warehouse(settings.db_path) as wh:
        quarantine = {r["item_id"]: r["detail"] for r in wh.rows("SELECT * FROM quarantine")}
        return set(load_papers(wh)), quarantine


def test_rejected_on_reclean_leaves_papers_and_is_retried_by_the_next_cleaner(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, prefect_harness
) -> None:
    settings = Settings().with_overrides({"data_dir": str(tmp_path / "data")})
    with Warehouse(settings.db_path) as wh:
        wh.upsert("stg_raw_sources", _sources(tmp_path), ("arxiv_id",), extra={"run_id": "r0"})
    clean_flow(settings, "r1")
    assert _state(settings) == (set(IDS), {})
    with Warehouse(settings.db_path) as wh:
        words = dict(wh.con.execute("SELECT paper_id, words FROM dim_papers").fetchall())
    longer, shorter = sorted(words, key=words.get, reverse=True)

    _bump(monkeypatch, "v2")
    strict = settings.with_overrides({"clean.min_words": words[shorter] + 1})
    clean_flow(strict, "r2")
    papers, quarantine = _state(settings)
    assert papers == {longer} and list(quarantine) == [shorter]
    assert quarantine[shorter].startswith("cleaner v2: ")
    assert clean_flow(strict, "r3").notes == ["nothing new to clean"]  # v2 tried it already

    _bump(monkeypatch, "v3")
    clean_flow(settings, "r4")
    assert _state(settings) == (set(IDS), {})
