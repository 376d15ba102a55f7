"""Samples from co-citation groups (docs/design.md §5).

Candidates are the k-subsets (k = `papers_per_sample`) of each group's usable papers. All
`command` candidates are tried before any `paragraph` one, and those before `subsection`
ones: the tighter the co-citation, the more related the papers. Within a kind the candidate
whose papers are closest in embedding space (mean pairwise cosine) goes first. Greedy: a
paper joins at most `max_samples_per_paper` samples.
"""

from __future__ import annotations

import itertools

import numpy as np

from lilo.tasks.config import SampleSettings
from lilo.tasks.records import CitationGroup, PaperText, Sample, content_id
from lilo.tasks.samples.citations import GROUP_KINDS

__all__ = ["build_samples"]

# Cosines are rounded before ranking so that float noise never reorders equal candidates.
_SCORE_DIGITS = 9


def build_samples(
    groups: list[CitationGroup],
    papers: dict[str, PaperText],
    embeddings: dict[str, np.ndarray],
    sampling: SampleSettings,
    dataset_version: str,
    survey_id: str,
) -> list[Sample]:
    """Samples of one survey, deterministic for the same inputs.

    Papers absent from `papers` (failed cleaning or validation) never enter. Each sample keeps
    its papers in the order the survey cites them: position matters to the analysis.
    """
    size = sampling.papers_per_sample
    uses: dict[str, int] = {}
    chosen: set[frozenset[str]] = set()
    samples: list[Sample] = []
    for kind in GROUP_KINDS:
        for _, paper_ids, group in _ranked(groups, kind, papers, embeddings, size):
            if frozenset(paper_ids) in chosen:
                continue
            if any(uses.get(p, 0) >= sampling.max_samples_per_paper for p in paper_ids):
                continue
            chosen.add(frozenset(paper_ids))
            for p in paper_ids:
                uses[p] = uses.get(p, 0) + 1
            samples.append(
                Sample(
                    sample_id=content_id(dataset_version, paper_ids),
                    dataset_version=dataset_version,
                    paper_ids=paper_ids,
                    topic=group.section,
                    survey_id=survey_id,
                    input_words=sum(papers[p].words for p in paper_ids),
                    group_kind=kind,
                )
            )
    return samples


def _ranked(
    groups: list[CitationGroup],
    kind: str,
    papers: dict[str, PaperText],
    embeddings: dict[str, np.ndarray],
    size: int,
) -> list[tuple[float, tuple[str, ...], CitationGroup]]:
    """This kind's candidates, closest first; ties keep group order, then citation order."""
    candidates: list[tuple[float, int, tuple[str, ...], CitationGroup]] = []
    for group in (g for g in groups if g.kind == kind):
        usable = [p for p in group.paper_ids if p in papers]
        if len(usable) < size:
            continue
        missing = [p for p in usable if p not in embeddings]
        if missing:
            raise ValueError(f"no embedding for {missing}: embed every paper before sampling")
        vectors = np.stack([embeddings[p] for p in usable]).astype(np.float64)
        vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
        cosine = vectors @ vectors.T
        for combo in itertools.combinations(range(len(usable)), size):
            pairs = list(itertools.combinations(combo, 2))
            mean = sum(float(cosine[i, j]) for i, j in pairs) / len(pairs)
            score = round(mean, _SCORE_DIGITS)
            candidates.append((score, len(candidates), tuple(usable[i] for i in combo), group))
    candidates.sort(key=lambda c: (-c[0], c[1]))
    return [(score, ids, group) for score, _, ids, group in candidates]
