"""Writes a result version's statistics (tasks/reproduce/significance.py) into `res_cell_stats`
and `res_paired`, once per version: the materialize stage calls it after each version."""

from __future__ import annotations

from lilo.tasks.config import Settings
from lilo.tasks.reproduce.significance import cell_statistics, paired_statistics
from lilo.tasks.scoring import leaderboard_scores
from lilo.warehouse.db import Warehouse
from lilo.warehouse.queries.results import has_cell_stats, headline_scores

__all__ = ["record_statistics"]


def record_statistics(wh: Warehouse, version: int, settings: Settings) -> int:
    """The cells' intervals and the paired comparisons of `version`, unless it has them;
    returns the rows written. A judge repeat (`fct_judge_repeats`) is not a sample: cells
    use the scores of the version itself. A diagnostic score (S_copy) gets its intervals but
    no comparison: it does not say which method is better."""
    if has_cell_stats(wh, version):
        return 0
    scores = headline_scores(wh, version, [h.name for h in leaderboard_scores()])
    if scores.empty:
        return 0
    stats = settings.stats
    cells = cell_statistics(scores, seed=stats.seed, resamples=stats.resamples)
    compared = [h.name for h in leaderboard_scores() if not h.diagnostic]
    paired = paired_statistics(
        scores[scores["score"].isin(compared)], stats.reference, seed=stats.seed
    )
    extra = {"version": version, "seed": stats.seed}
    with wh.transaction():
        wh.upsert(
            "res_cell_stats",
            [{**extra, **r} for r in cells],
            ("version", "variant", "target_words", "backbone", "score"),
        )
        if paired:
            wh.upsert(
                "res_paired",
                [{**extra, **r} for r in paired],
                ("version", "variant", "reference", "target_words", "backbone", "score"),
            )
    return len(cells) + len(paired)
