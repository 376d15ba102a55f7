"""Per leaderboard cell, a bootstrap interval over samples; per method variant, the paired
comparison with a reference variant on the samples both scored (tasks/stats.py). Pure:
a result version's headline score rows in, records for `res_cell_stats` and `res_paired`
out. `target_words = 0` is the Overall column: each sample's mean over the lengths it was
scored at (all the cell's lengths, else the sample is left out of Overall)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pandas as pd

from lilo.tasks.stats import bootstrap_interval, paired_comparison

__all__ = ["OVERALL", "cell_statistics", "own_variants", "paired_statistics", "with_overall"]

OVERALL = 0

_CELL = ["variant", "target_words", "backbone", "score"]


def own_variants(rows: pd.DataFrame, own: Mapping[str, str] | None = None) -> pd.DataFrame:
    """The rows of each method's own variant, the one that stands for the paper's method:
    `own[method]` (the label the method's run without a sweep gives, e.g.
    `compress[extractive]`), else the variant named as the method. A sweep's variants
    (`ral_writer[k=8]`) are not the paper's methods."""
    if rows.empty:
        return rows
    wanted = rows["method"].map(lambda m: (own or {}).get(m, m))
    return rows[rows["variant"] == wanted]


def with_overall(scores: pd.DataFrame) -> pd.DataFrame:
    """Rows `sample_id, method, variant, target_words, backbone, score, value` (one per
    generation, papers in the sample's own order) plus the Overall rows."""
    lengths = scores.groupby(["variant", "backbone"])["target_words"].nunique()
    per_sample = scores.groupby(["method", "variant", "backbone", "score", "sample_id"]).agg(
        value=("value", "mean"), lengths=("target_words", "nunique")
    )
    per_sample = per_sample.reset_index()
    full = per_sample["lengths"].to_numpy() == [
        lengths[(v, b)] for v, b in zip(per_sample["variant"], per_sample["backbone"], strict=True)
    ]
    overall = per_sample[full & (per_sample["lengths"] > 1)].drop(columns="lengths")
    overall.insert(0, "target_words", OVERALL)
    return pd.concat([scores, overall], ignore_index=True)


def cell_statistics(
    scores: pd.DataFrame, *, seed: int = 0, resamples: int = 2000
) -> list[dict[str, Any]]:
    """One record per cell (variant x length x backbone x score): n samples, mean, 95%
    interval."""
    records = []
    for key, cell in with_overall(scores).groupby(_CELL + ["method"], sort=True):
        variant, target_words, backbone, score, method = key
        ci = bootstrap_interval(cell["value"].tolist(), seed=seed, resamples=resamples)
        records.append(
            {
                "method": method,
                "variant": variant,
                "target_words": int(target_words),
                "backbone": backbone,
                "score": score,
                "n": ci.n,
                "mean": ci.mean,
                "ci_low": ci.low,
                "ci_high": ci.high,
            }
        )
    return records


def paired_statistics(
    scores: pd.DataFrame, reference: str, *, seed: int = 0
) -> list[dict[str, Any]]:
    """Every other variant against `reference` (a variant label, e.g. `ral_writer`), per
    length (and Overall), backbone and score, on the samples both have: difference =
    variant minus reference."""
    data = with_overall(scores)
    ref = data[data["variant"] == reference]
    records = []
    for (variant, target_words, backbone, score), cell in data[
        data["variant"] != reference
    ].groupby(_CELL, sort=True):
        base = ref[
            (ref["target_words"] == target_words)
            & (ref["backbone"] == backbone)
            & (ref["score"] == score)
        ]
        both = cell.merge(base, on="sample_id", suffixes=("", "_ref"))
        if both.empty:
            continue
        paired = paired_comparison(both["value"].tolist(), both["value_ref"].tolist(), seed=seed)
        records.append(
            {
                "variant": variant,
                "reference": reference,
                "target_words": int(target_words),
                "backbone": backbone,
                "score": score,
                "n": paired.difference.n,
                "difference": paired.difference.mean,
                "ci_low": paired.difference.low,
                "ci_high": paired.difference.high,
                "p_value": paired.p_value,
                "within_noise": paired.within_noise,
            }
        )
    return records
