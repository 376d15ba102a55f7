"""Samples stage: co-cited triplets of clean papers, one immutable dataset version (§5)."""

from __future__ import annotations

import numpy as np
from prefect import flow, task
from prefect.cache_policies import NO_CACHE

from flows._load import load_papers
from flows._stage import StageReport, stage
from tasks.config import Settings
from tasks.embeddings import Embedder
from tasks.records import PaperText, Sample
from tasks.samples.citations import CitationGroup
from tasks.samples.triplets import build_samples

__all__ = ["samples_flow"]

_EMBED_WORDS = 300  # title + opening words: all-MiniLM-L6-v2 reads 256 tokens at most


@task(name="build-samples", cache_policy=NO_CACHE)
def build_samples_task(
    groups_by_survey: dict[str, list[CitationGroup]],
    papers: dict[str, PaperText],
    settings: Settings,
) -> tuple[list[Sample], int, int]:
    embedder = Embedder(settings)
    ids = sorted(papers)
    vectors = embedder.embed(
        [f"{papers[i].title}\n{' '.join(papers[i].text.split()[:_EMBED_WORDS])}" for i in ids]
    )
    embeddings: dict[str, np.ndarray] = dict(zip(ids, vectors, strict=True))
    samples: list[Sample] = []
    for survey_id, groups in sorted(groups_by_survey.items()):
        used = {p for s in samples for p in s.paper_ids}
        available = {k: v for k, v in papers.items() if k not in used}
        samples += build_samples(
            groups, available, embeddings, settings, settings.dataset_version, survey_id
        )
    return samples, embedder.computed, embedder.cached


@flow(name="samples", log_prints=True)
def samples_flow(settings: Settings, run_id: str) -> StageReport:
    """Build the dataset version's samples once; an existing version is never changed."""
    with stage("samples", settings, run_id) as (report, wh):
        existing = wh.scalar(
            "SELECT count(*) FROM dim_samples WHERE dataset_version = ?", [settings.dataset_version]
        )
        if existing:
            report.note(
                f"dataset {settings.dataset_version} exists ({existing} samples): immutable, kept"
            )
            return report
        groups: dict[str, list[CitationGroup]] = {}
        for row in wh.rows(
            "SELECT * EXCLUDE (run_id) FROM dim_citation_groups "
            "WHERE list_contains(?, survey_id) ORDER BY group_id",
            [list(settings.surveys)],
        ):
            groups.setdefault(row.pop("survey_id"), []).append(
                CitationGroup(
                    **{
                        **row,
                        "cite_keys": tuple(row["cite_keys"]),
                        "paper_ids": tuple(row["paper_ids"]),
                    }
                )
            )
        papers = load_papers(wh)
        samples, made, cached = build_samples_task(groups, papers, settings)
        report.embeddings_made, report.embeddings_cached = made, cached
        report.write(wh, "dim_samples", samples, ("sample_id",))
        report.note(
            f"dataset {settings.dataset_version}: {len(samples)} samples "
            f"from {len(papers)} clean papers"
        )
    return report
