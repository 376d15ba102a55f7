"""Result versions as the leaderboard, the report and the statistics read them."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import duckdb
import pandas as pd

from lilo.tasks.errors import LiloError
from lilo.tasks.report_records import BoardRows, ReportData, Scope, length_label
from lilo.warehouse.queries._read import Source, frame, scalar, tuples

__all__ = [
    "ANALYST_VIEWS",
    "NoResults",
    "default_version",
    "has_cell_stats",
    "query_program",
    "headline_scores",
    "latest_version_run",
    "read_board",
    "ral_recall_of",
    "read_paired",
    "read_report_data",
    "read_scope",
    "scope_changes",
    "view",
]


class NoResults(LiloError):
    """No result version matches what was asked for; the message names those there are."""


# The analyst views a run's artifacts show whole.
ANALYST_VIEWS = (
    "leaderboard",
    "position_curve",
    "position_permutation",
    "winrate",
    "failures",
    "probe_curve",
    "probe_summary",
    "probe_vs_summary",
)


def view(source: Source, name: str) -> pd.DataFrame:
    """One analyst view, whole."""
    if name not in ANALYST_VIEWS:
        raise ValueError(f"not an analyst view: {name!r}")
    return frame(source, f"SELECT * FROM {name}")  # a name from ANALYST_VIEWS only


def query_program(published: Path) -> str:
    """A Python program that prints the published copy's `leaderboard` (each method's
    scores per length), for a user to run. The path goes in as a string literal (JSON's is
    Python's): a data dir may hold quotes."""
    return (
        f"import duckdb; print(duckdb.connect({json.dumps(str(published))}, read_only=True)"
        '.sql("SELECT variant, target_words, s_l, s_c, s_q, scored, expected FROM leaderboard"))'
    )


def read_board(source: Source, dataset: str | None = None, version: int | None = None) -> BoardRows:
    """Result version `version`, or the one the `leaderboard` view shows (the macro
    `default_result_version`: the latest published, else the latest), among those of dataset
    version `dataset` when given. NoResults naming what there is when nothing matches."""
    known = tuples(
        source,
        "SELECT version, dataset_version, partial, published FROM res_versions ORDER BY version",
    )
    if not known:
        raise NoResults("no result versions yet: runs publish once summaries are scored")
    datasets = sorted({d for _, d, _, _ in known})
    if dataset is not None and dataset not in datasets:
        raise NoResults(
            f"no results for dataset version {dataset!r}: there are {', '.join(datasets)}"
        )
    candidates = [k for k in known if dataset is None or k[1] == dataset]
    try:
        if version is None:
            version = scalar(source, "SELECT default_result_version(?)", [dataset])
        found = [k for k in candidates if k[0] == version]
        if not found:
            versions = ", ".join(str(k[0]) for k in candidates)
            where = f" of dataset version {dataset!r}" if dataset else ""
            raise NoResults(f"no result version {version}{where}: there are {versions}")
        chosen = found[0]
        rows = frame(source, "SELECT * FROM leaderboard_of(?)", [chosen[0]])
        paired = read_paired(source, chosen[0])
        scope = read_scope(source, chosen[0])
    except (duckdb.CatalogException, duckdb.BinderException) as exc:  # a copy not remade
        raise NoResults(
            f"these results were published by an older lilo ({exc.args[0].splitlines()[0]}): "
            "any run publishes them again with today's views"
        ) from exc
    return BoardRows(chosen[0], chosen[1], bool(chosen[2]), bool(chosen[3]), rows, paired, scope)


def read_scope(source: Source, version: int) -> Scope | None:
    """What result version `version` holds (what its run asked for); None for a version
    made before scopes were recorded."""
    found = tuples(
        source,
        "SELECT dataset_version, scope_samples, dataset_samples, scope_variants, "
        "scope_target_words, scope_backbone, scope_judge FROM res_versions "
        "WHERE version = ? AND scope_samples IS NOT NULL",
        [version],
    )
    if not found:
        return None
    dataset, samples, n, variants, lengths, backbone, judge = found[0]
    return Scope(dataset, list(samples), int(n), list(variants), list(lengths), backbone, judge)


def read_paired(source: Source, version: int) -> pd.DataFrame:
    """Result version `version`'s paired comparisons with the reference (`res_paired`)."""
    return frame(
        source,
        "SELECT variant, reference, target_words, backbone, score, n, difference, ci_low, "
        "ci_high, p_value, within_noise FROM res_paired WHERE version = ?",
        [version],
    )


def default_version(source: Source) -> int | None:
    """The result version the analyst views show (the macro `default_result_version`)."""
    return scalar(source, "SELECT default_result_version(NULL)")


def latest_version_run(source: Source) -> str | None:
    """The run that made the latest result version (None before any)."""
    return scalar(source, "SELECT run_id FROM res_versions ORDER BY version DESC LIMIT 1")


def ral_recall_of(source: Source, variant: str) -> pd.DataFrame:
    """The `ral_recall` rows of one RAL-Writer variant, longest length first."""
    return frame(
        source,
        "SELECT * FROM ral_recall WHERE variant = ? ORDER BY target_words DESC, sample_id, step",
        [variant],
    )


def has_cell_stats(source: Source, version: int) -> bool:
    """Whether the version's statistics (`res_cell_stats`) are written."""
    return bool(scalar(source, "SELECT count(*) FROM res_cell_stats WHERE version = ?", [version]))


def headline_scores(source: Source, version: int, scores: list[str]) -> pd.DataFrame:
    """The version's values of `scores`, one row per summary and score, in each sample's
    own paper order only."""
    return frame(
        source,
        "SELECT sample_id, method, variant, target_words, backbone, score, value "
        "FROM res_scores WHERE version = ? AND coalesce(rotation, 0) = 0 "
        "AND list_contains(?, score) AND value IS NOT NULL",
        [version, scores],
    )


# For the latest version each query is its analyst view's (`leaderboard`, `position_curve`,
# `cost`) with the version as a parameter, so a report of an older version says what those
# views said when it was the latest, and a report of the latest says what they say now.
_REPORT_QUERIES = {
    "leaderboard": "SELECT * EXCLUDE (version) FROM leaderboard_of($version)",
    "position_curve": """
SELECT coalesce(variant, method) AS method, target_words, backbone,
    CAST(replace(score, 'single_pos', '') AS INTEGER) AS position,
    round(avg(value), 2) AS s_single, count(*) AS n
FROM res_scores
WHERE version = $version AND score LIKE 'single_pos%' AND coalesce(rotation, 0) = 0
GROUP BY ALL
ORDER BY method, target_words, position
""",
    "cost": """
WITH per_generation AS (
    SELECT DISTINCT generation_id, coalesce(variant, method) AS method, target_words, backbone,
        tokens_in, tokens_out, cost
    FROM res_scores WHERE version = $version
)
SELECT method, target_words, backbone, count(*) AS generations,
    round(avg(tokens_in)) AS tokens_in_per_summary,
    round(avg(tokens_out)) AS tokens_out_per_summary,
    CASE WHEN count(cost) = count(*) THEN avg(cost) END AS cost_per_summary
FROM per_generation
GROUP BY ALL
ORDER BY method, target_words
""",
    # Required against generated words, per summary of the version (own paper order only).
    "lengths": """
SELECT DISTINCT r.generation_id, coalesce(r.variant, r.method) AS method, r.target_words,
    g.words
FROM res_scores AS r JOIN fct_generations AS g USING (generation_id)
WHERE r.version = $version AND coalesce(r.rotation, 0) = 0
ORDER BY method, r.target_words, r.generation_id
""",
}


def read_report_data(source: Source, version: int | None = None) -> ReportData:
    """Result version `version` (default: the latest), without dataset statistics (the
    caller adds them). Raises NoResults naming the versions there are."""
    versions = [r[0] for r in tuples(source, "SELECT version FROM res_versions ORDER BY 1")]
    if not versions:
        raise NoResults("no result versions yet: run the pipeline until summaries are scored")
    version = versions[-1] if version is None else version
    if version not in versions:
        raise NoResults(f"no result version {version}: there are {', '.join(map(str, versions))}")
    created_at, dataset_version, partial = tuples(
        source,
        "SELECT created_at, dataset_version, partial FROM res_versions WHERE version = ?",
        [version],
    )[0]
    frames: dict[str, Any] = {
        name: frame(source, query, {"version": version}) for name, query in _REPORT_QUERIES.items()
    }
    return ReportData(
        version=version,
        created_at=created_at,
        dataset_version=dataset_version,
        partial=bool(partial),
        failures=view(source, "failures"),
        paired=read_paired(source, version),
        scope=read_scope(source, version),
        **frames,
    )


def scope_changes(source: Source, before: int, after: int) -> list[str]:
    """What result version `after` no longer shows of `before` (the version the leaderboard
    showed until now), in words: cells outside its scope, and cells both have over other
    samples. Empty when `after` holds all of `before`'s cells over the same samples."""
    cells = tuples(
        source,
        "SELECT version, variant, target_words FROM res_cells WHERE version IN (?, ?) "
        "ORDER BY variant, target_words",
        [before, after],
    )
    now = {(v, t) for version, v, t in cells if version == after}
    dropped: dict[str, list[str]] = {}
    for version, variant, words in cells:
        if version == before and (variant, words) not in now:
            dropped.setdefault(variant, []).append(length_label(words))
    found = tuples(
        source,
        "SELECT version, dataset_version, scope_samples FROM res_versions WHERE version IN (?, ?)",
        [before, after],
    )
    dataset = {v: d for v, d, _ in found}
    samples = {v: s for v, _, s in found}
    if dataset.get(before) != dataset.get(after):
        return [
            f"version {before}, of dataset {dataset.get(before)}, is not replaced: "
            f"`lilo leaderboard --result-version {before}` shows it"
        ]
    said = []
    if dropped:
        listed = "; ".join(f"{v} at {', '.join(lengths)}" for v, lengths in dropped.items())
        said.append(
            f"version {before}'s cells outside this run's scope ({listed}) are not in version "
            f"{after}: `lilo leaderboard --result-version {before}` shows them"
        )
    old, new = samples.get(before), samples.get(after)
    if old is not None and new is not None and sorted(old) != sorted(new):
        said.append(
            f"version {after}'s cells average {len(new)} samples where version {before}'s "
            f"averaged {len(old)}"
        )
    return said
