"""What a report shows of one result version, read from a warehouse connection.

For the latest version each query is its analyst view's (`leaderboard`, `position_curve`,
`cost`) with the version as a parameter, so a report of an older version says what those
views said when it was the latest, and a report of the latest says what they say now.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime

import duckdb
import pandas as pd

from tasks.leaderboard import read_paired
from tasks.samples.stats import DatasetStats

__all__ = ["ReportData", "read_report_data"]

_LEADERBOARD = """
SELECT lb.* EXCLUDE (version)
FROM res_leaderboard AS lb LEFT JOIN method_order AS o USING (method)
WHERE version = $version
ORDER BY coalesce(o.rank, 5), lb.method, lb.variant, lb.target_words
"""

_POSITION_CURVE = """
SELECT coalesce(variant, method) AS method, target_words, backbone,
    CAST(replace(score, 'single_pos', '') AS INTEGER) AS position,
    round(avg(value), 2) AS s_single, count(*) AS n
FROM res_scores
WHERE version = $version AND score LIKE 'single_pos%' AND coalesce(rotation, 0) = 0
GROUP BY ALL
ORDER BY method, target_words, position
"""

_COST = """
WITH per_generation AS (
    SELECT DISTINCT generation_id, coalesce(variant, method) AS method, target_words, backbone,
        tokens_in, tokens_out
    FROM res_scores WHERE version = $version
)
SELECT method, target_words, backbone, count(*) AS generations,
    round(avg(tokens_in)) AS tokens_in_per_summary,
    round(avg(tokens_out)) AS tokens_out_per_summary
FROM per_generation
GROUP BY ALL
ORDER BY method, target_words
"""

# Required against generated words, per summary of the version (own paper order only).
_LENGTHS = """
SELECT DISTINCT r.generation_id, coalesce(r.variant, r.method) AS method, r.target_words,
    g.words
FROM res_scores AS r JOIN fct_generations AS g USING (generation_id)
WHERE r.version = $version AND coalesce(r.rotation, 0) = 0
ORDER BY method, r.target_words, r.generation_id
"""


@dataclass(frozen=True)
class ReportData:
    """One result version as DataFrames, plus its dataset's statistics when known (they
    are read by the samples stage's code, which lives above tasks)."""

    version: int
    created_at: datetime
    dataset_version: str
    partial: bool
    leaderboard: pd.DataFrame
    position_curve: pd.DataFrame
    lengths: pd.DataFrame
    cost: pd.DataFrame
    failures: pd.DataFrame
    stats: DatasetStats | None = None
    # Each variant minus the reference method, paired by sample (`res_paired`).
    paired: pd.DataFrame = field(default_factory=pd.DataFrame)


def read_report_data(con: duckdb.DuckDBPyConnection, version: int | None = None) -> ReportData:
    """Result version `version` (default: the latest), without dataset statistics (the
    caller adds them). Raises LookupError naming the versions there are."""
    versions = [r[0] for r in con.execute("SELECT version FROM res_versions ORDER BY 1").fetchall()]
    if not versions:
        raise LookupError("no result versions yet: run the pipeline until summaries are scored")
    version = versions[-1] if version is None else version
    if version not in versions:
        raise LookupError(f"no result version {version}: there are {', '.join(map(str, versions))}")
    created_at, dataset_version, partial = con.execute(
        "SELECT created_at, dataset_version, partial FROM res_versions WHERE version = ?",
        [version],
    ).fetchall()[0]

    def df(query: str) -> pd.DataFrame:
        return con.execute(query, {"version": version}).df()

    return ReportData(
        version=version,
        created_at=created_at,
        dataset_version=dataset_version,
        partial=bool(partial),
        leaderboard=df(_LEADERBOARD),
        position_curve=df(_POSITION_CURVE),
        lengths=df(_LENGTHS),
        cost=df(_COST),
        failures=con.execute("SELECT * FROM failures").df(),
        paired=read_paired(con, version),
    )
