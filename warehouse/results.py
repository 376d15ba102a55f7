"""Versioned results (DESIGN §10): each materialization with new content is a new immutable
version in `res_scores`; content equal to the latest version's reuses it."""

from __future__ import annotations

from dataclasses import dataclass

from warehouse.db import Warehouse

__all__ = ["ResultVersion", "materialize_results"]

_CURRENT = """
    SELECT g.generation_id, g.sample_id, g.method, g.target_words, g.backbone,
           s.score, s.value, g.tokens_in, g.tokens_out
    FROM fct_scores s
    JOIN fct_generations g USING (generation_id)
    JOIN dim_samples d USING (sample_id)
    WHERE d.dataset_version = $dataset_version
"""


@dataclass(frozen=True)
class ResultVersion:
    version: int
    created: bool
    n_rows: int
    content_hash: str


def materialize_results(wh: Warehouse, dataset_version: str, run_id: str) -> ResultVersion | None:
    params = {"dataset_version": dataset_version}
    found = wh.con.execute(
        f"SELECT count(*), md5(coalesce(string_agg(generation_id || '|' || score || '|' || "
        f"coalesce(value::VARCHAR, ''), ',' ORDER BY generation_id, score), '')) FROM ({_CURRENT})",
        params,
    ).fetchall()
    n_rows, content_hash = int(found[0][0]), str(found[0][1])
    if not n_rows:
        return None
    # Only the latest version is reused: were an older one with the same content reused,
    # the `leaderboard` view (the latest version) would show something else than now.
    latest = wh.con.execute(
        "SELECT version, content_hash FROM res_versions ORDER BY version DESC LIMIT 1"
    ).fetchall()
    if latest and latest[0][1] == content_hash:
        return ResultVersion(int(latest[0][0]), False, n_rows, content_hash)
    version = int(wh.scalar("SELECT coalesce(max(version), 0) + 1 FROM res_versions"))
    with wh.transaction():
        wh.con.execute(
            f"INSERT INTO res_scores SELECT {version} AS version, * FROM ({_CURRENT})", params
        )
        wh.con.execute(
            "INSERT INTO res_versions SELECT ?, now(), ?, ?, ?, "
            "(SELECT count(DISTINCT generation_id) FROM res_scores WHERE version = ?), ?",
            [version, run_id, content_hash, dataset_version, version, n_rows],
        )
    return ResultVersion(version, True, n_rows, content_hash)
