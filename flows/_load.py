"""Warehouse rows back into the records tasks take."""

from __future__ import annotations

import json
import re

from tasks.config import Settings
from tasks.prompts import PromptPack, lilo_pack
from tasks.qa import is_ready, waiting_for_review
from tasks.records import Generation, PaperText, QAPair, Sample
from warehouse import Warehouse

__all__ = [
    "load_generations",
    "load_pack",
    "load_papers",
    "load_qa",
    "load_samples",
    "ready_samples",
    "waiting_samples",
]


def load_papers(wh: Warehouse) -> dict[str, PaperText]:
    return {
        r["paper_id"]: PaperText(
            **{
                **r,
                "removed": json.loads(r["removed"] or "{}"),
                "warnings": tuple(r["warnings"] or ()),
            }
        )
        for r in wh.rows("SELECT * EXCLUDE (run_id) FROM dim_papers")
    }


def load_samples(wh: Warehouse, dataset_version: str, complete: bool = False) -> list[Sample]:
    """The version's samples; `complete=True`: only those whose papers are all clean now (a
    paper a newer cleaner rejects leaves dim_papers, and the samples stage says which)."""
    where = "dataset_version = ?"
    if complete:
        where += (
            " AND NOT EXISTS (SELECT 1 FROM unnest(paper_ids) AS u(paper_id) "
            "WHERE u.paper_id NOT IN (SELECT paper_id FROM dim_papers))"
        )
    return [
        Sample(**{**r, "paper_ids": tuple(r["paper_ids"])})
        for r in wh.rows(
            f"SELECT * EXCLUDE (run_id) FROM dim_samples WHERE {where} ORDER BY sample_id",
            [dataset_version],
        )
    ]


def _natural(sample_id: str) -> list[object]:
    """group_2 before group_10."""
    return [int(t) if t.isdigit() else t for t in re.split(r"(\d+)", sample_id)]


def ready_samples(
    wh: Warehouse, settings: Settings
) -> tuple[list[Sample], dict[str, list[QAPair]]]:
    """The samples generation and scoring work on: complete and ready (DESIGN §2), in
    natural id order, the first `generate.samples` of them when that is set; and the
    version's QA pairs."""
    qa = load_qa(wh, settings.dataset_version)
    samples = sorted(
        (
            s
            for s in load_samples(wh, settings.dataset_version, complete=True)
            if is_ready(qa.get(s.sample_id, []), settings)
        ),
        key=lambda s: _natural(s.sample_id),
    )
    limit = settings.generate.samples
    return (samples[:limit] if limit else samples), qa


def waiting_samples(
    wh: Warehouse, settings: Settings, qa: dict[str, list[QAPair]]
) -> dict[str, str]:
    """Complete samples a reviewer holds up (sample id -> "waiting for review: ..."): a run
    expects them in its results, where they are missing. With `generate.samples` set (the
    first N ready samples) none is expected."""
    if settings.generate.samples:
        return {}
    waiting = {
        s.sample_id: waiting_for_review(qa.get(s.sample_id, []), settings)
        for s in load_samples(wh, settings.dataset_version, complete=True)
    }
    return {sample: why for sample, why in waiting.items() if why}


def load_pack(wh: Warehouse, dataset_version: str) -> PromptPack:
    """The prompt pack the dataset version carries; lilo's own when it carries none."""
    assets = {
        r["name"]: r["content"]
        for r in wh.rows(
            "SELECT name, content FROM dim_dataset_assets WHERE dataset_version = ?",
            [dataset_version],
        )
    }
    return PromptPack.from_assets(dataset_version, assets) if assets else lilo_pack()


def load_qa(wh: Warehouse, dataset_version: str) -> dict[str, list[QAPair]]:
    by_sample: dict[str, list[QAPair]] = {}
    for r in wh.rows(
        "SELECT q.* EXCLUDE (run_id) FROM fct_qa_pairs q JOIN dim_samples s USING (sample_id) "
        "WHERE s.dataset_version = ? ORDER BY q.round, q.qa_id",
        [dataset_version],
    ):
        pair = QAPair(
            **{
                **r,
                "paper_ids": tuple(r["paper_ids"]),
                "evidence": tuple(json.loads(r["evidence"] or "[]")),
            }
        )
        by_sample.setdefault(pair.sample_id, []).append(pair)
    return by_sample


def load_generations(wh: Warehouse, where: str, params: list[object]) -> list[Generation]:
    return [
        Generation(
            **{
                **r,
                "method_args": json.loads(r["method_args"] or "{}"),
                "plan": tuple(json.loads(r["plan"] or "[]")),
                "restated": tuple(json.loads(r["restated"] or "[]")),
            }
        )
        for r in wh.rows(
            "SELECT * EXCLUDE (run_id, config_hash, code_version) FROM fct_generations "
            f"WHERE {where} ORDER BY generation_id",
            params,
        )
    ]
