"""Samples stage: co-cited triplets of clean papers, one immutable dataset version (§5),
and the dataset's statistics (CLI table, Prefect artifacts, histogram)."""

from __future__ import annotations

from datetime import UTC, datetime

import numpy as np
from prefect import flow, task
from prefect.cache_policies import NO_CACHE

from lilo.flows._artifacts import publish
from lilo.flows._stage import StageReport, stage
from lilo.tasks.config import Settings
from lilo.tasks.embeddings import Embedder
from lilo.tasks.records import CitationGroup, PaperText, Quarantine, Sample
from lilo.tasks.results_report import cache_figures, stats_artifacts
from lilo.tasks.samples.triplets import build_samples
from lilo.tasks.text import counted
from lilo.warehouse import Warehouse
from lilo.warehouse.queries.datasets import (
    dataset_exists,
    load_dataset_stats,
    load_samples,
    next_dataset_number,
    sample_ids,
)
from lilo.warehouse.queries.papers import clean_paper_ids, load_papers
from lilo.warehouse.queries.surveys import citation_groups, settled_surveys

__all__ = ["load_dataset_stats", "plan_samples", "samples_flow"]

_EMBED_WORDS = 300  # title + opening words: all-MiniLM-L6-v2 reads 256 tokens at most


@task(name="build-samples", cache_policy=NO_CACHE)
def build_samples_task(
    groups_by_survey: dict[str, list[CitationGroup]],
    papers: dict[str, PaperText],
    settings: Settings,
) -> tuple[list[Sample], int, int]:
    """Samples over the surveys in order (a paper used by one survey's samples is not
    offered to the next), with the embeddings made and served from cache."""
    embedder = Embedder(settings.embedding, settings.data_dir)
    ids = sorted(papers)
    vectors = embedder.embed(
        [f"{papers[i].title}\n{' '.join(papers[i].text.split()[:_EMBED_WORDS])}" for i in ids]
    )
    embeddings: dict[str, np.ndarray] = dict(zip(ids, vectors, strict=True))
    samples: list[Sample] = []
    for survey_id, groups in groups_by_survey.items():
        used = {p for s in samples for p in s.paper_ids}
        available = {k: v for k, v in papers.items() if k not in used}
        samples += build_samples(
            groups, available, embeddings, settings.samples, settings.dataset_version, survey_id
        )
    return samples, embedder.computed, embedder.cached


def plan_samples(
    wh: Warehouse, settings: Settings, surveys: list[str]
) -> tuple[list[Sample], int, int]:
    """The samples `surveys` (in this order) would give now, at most `samples.target_samples`
    of them; written nowhere."""
    groups = citation_groups(wh, surveys)
    samples, made, cached = build_samples_task(groups, load_papers(wh), settings)
    return samples[: settings.samples.target_samples], made, cached


@flow(name="samples", log_prints=True)
def samples_flow(settings: Settings, run_id: str) -> StageReport:
    """Build the dataset version's samples once; an existing version is never changed."""
    version = settings.dataset_version
    with stage("samples", settings, run_id) as (report, wh):
        existing = len(sample_ids(wh, version))
        written = dataset_exists(wh, version)
        surveys = list(dict.fromkeys(settings.surveys))
        if existing or written:
            report.note(f"dataset {version} exists ({existing} samples): immutable, kept")
            _hold_incomplete(wh, version, report)
        elif waiting := _surveys_not_in_yet(wh, surveys):
            report.note(
                f"dataset {version} not built yet: surveys {', '.join(waiting)} are not read "
                "(fetch failed or pending); the next run tries again"
            )
        else:
            samples, made, cached = plan_samples(wh, settings, surveys)
            report.embeddings_made, report.embeddings_cached = made, cached
            if samples:
                with wh.transaction():  # a version and its samples, or neither
                    report.write(wh, "dim_samples", samples, ("sample_id",))
                    report.write(
                        wh,
                        "dim_dataset_versions",
                        [_version_row(wh, settings, samples)],
                        ("dataset_version",),
                    )
                report.note(
                    f"dataset {version}: {counted(len(samples), 'sample')} from "
                    f"{counted(len(surveys), 'survey')}"
                )
            else:
                report.note(
                    f"dataset {version} not built: no triplet of clean, co-cited papers yet "
                    "(see the quarantine table); the next run tries again"
                )
        stats = load_dataset_stats(wh.con, version)
    cache_figures(settings)
    publish(*stats_artifacts(stats))
    return report


def _hold_incomplete(wh: Warehouse, version: str, report: StageReport) -> None:
    """Samples with a paper that is no longer clean (a newer cleaner rejected it) are held
    in quarantine, and left out of later stages, until it is clean again."""
    clean = clean_paper_ids(wh)
    missing = {
        s.sample_id: [p for p in s.paper_ids if p not in clean] for s in load_samples(wh, version)
    }
    held = [
        Quarantine(
            sample_id, "samples", "paper_not_clean", "papers no longer clean: " + ", ".join(ids)
        )
        for sample_id, ids in missing.items()
        if ids
    ]
    with wh.transaction():
        report.write(wh, "quarantine", held, ("item_id", "stage"), update=True)
        wh.clear_quarantine("samples", [sample_id for sample_id, ids in missing.items() if not ids])
    if held:
        report.note(f"{len(held)} samples held: a paper of theirs is no longer clean")


def _surveys_not_in_yet(wh: Warehouse, surveys: list[str]) -> list[str]:
    """Surveys neither read nor quarantined for good: a version built without them would
    be frozen short of them. A failed download (`fetch_failed`) is retried, so it waits."""
    settled = settled_surveys(wh)
    return [s for s in surveys if s not in settled]


def _version_row(wh: Warehouse, settings: Settings, samples: list[Sample]) -> dict[str, object]:
    return {
        "dataset_version": settings.dataset_version,
        "number": next_dataset_number(wh),
        "created_at": datetime.now(UTC).replace(tzinfo=None),
        "surveys": list(dict.fromkeys(settings.surveys)),
        "n_samples": len(samples),
        "n_papers": len({p for s in samples for p in s.paper_ids}),
        "config_hash": settings.config_hash(),
    }
