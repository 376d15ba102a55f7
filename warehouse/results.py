"""Versioned results (docs/design.md §10): each materialization with new content is a new immutable
version in `res_scores`, with each leaderboard cell's account in `res_cells` (expected,
generated, failed, scored); content equal to the latest version's reuses it.

A failed generation or an unscored one is a result, not an absence, and so is a sample that
waits for review: it is expected (`res_waiting` says why it is missing). A version whose cells
miss anything is marked `partial`, and the leaderboard shows n scored / n expected. A partial
version is not `published` (it does not replace the last complete one as the default
`leaderboard`) unless the run allows it (`publish_partial`).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

import pandas as pd

from lilo.warehouse.db import Warehouse

__all__ = ["Expected", "ResultVersion", "materialize_results"]

_CURRENT = """
    SELECT g.generation_id, g.sample_id, g.method, g.target_words, g.backbone,
           s.score, s.value, g.tokens_in, g.tokens_out,
           coalesce(g.variant, g.method) AS variant, coalesce(g.rotation, 0) AS rotation, s.judge
    FROM fct_scores s
    JOIN fct_generations g USING (generation_id)
    WHERE list_contains($samples, g.sample_id)
"""
_COLUMNS = (
    "generation_id, sample_id, method, target_words, backbone, score, value, "
    "tokens_in, tokens_out, variant, rotation, judge"
)
# The three headline scores a generation needs to count as scored.
_HEADLINE = ("length", "consistency", "quality")


@dataclass(frozen=True)
class Expected:
    """What a run was asked for: these samples x method variants x lengths on this backbone,
    and the samples that wait for review (id -> why): expected as well, with nothing to show
    yet."""

    samples: list[str]
    methods: Iterable[str]
    target_words: Iterable[int]
    backbone: str
    waiting: dict[str, str] = field(default_factory=dict)

    @property
    def all_samples(self) -> list[str]:
        return [*self.samples, *sorted(set(self.waiting) - set(self.samples))]


@dataclass(frozen=True)
class ResultVersion:
    version: int
    created: bool
    n_rows: int
    content_hash: str
    partial: bool
    published: bool


def _cells(wh: Warehouse, expected: Expected) -> pd.DataFrame:
    """Per method x variant x length x backbone (papers in the sample's own order): how many
    summaries were expected, generated, failed and fully scored."""
    found = wh.df(
        f"""
        WITH gens AS (
            SELECT generation_id, sample_id, method, coalesce(variant, method) AS variant,
                   target_words, backbone, error
            FROM fct_generations
            WHERE list_contains(?, sample_id) AND coalesce(rotation, 0) = 0
        ),
        headline AS (
            SELECT generation_id FROM fct_scores
            WHERE list_contains({list(_HEADLINE)}, score)
            GROUP BY generation_id HAVING count(DISTINCT score) = {len(_HEADLINE)}
        )
        SELECT method, variant, target_words, backbone,
               count(DISTINCT sample_id) AS n_samples,
               count(*) FILTER (WHERE error = '') AS n_generated,
               count(*) FILTER (WHERE error <> '') AS n_failed,
               count(*) FILTER (WHERE generation_id IN (SELECT generation_id FROM headline))
                   AS n_scored
        FROM gens GROUP BY ALL
        """,
        [expected.all_samples],
    )
    # Expected methods are variants (`compress[extractive]`, `agentwrite[sees-written]`).
    wanted = {(m, t) for m in expected.methods for t in expected.target_words}
    asked = len(expected.all_samples)
    labels = [v or m for v, m in zip(found["variant"], found["method"], strict=True)]
    found["n_expected"] = [
        max(asked, n) if (m, t) in wanted and b == expected.backbone else n
        for m, t, b, n in zip(
            labels,
            found["target_words"],
            found["backbone"],
            found["n_samples"],
            strict=True,
        )
    ]
    present = set(zip(labels, found["target_words"], found["backbone"], strict=True))
    missing = [
        {"method": m.split("[")[0], "variant": m, "target_words": t, "backbone": expected.backbone,
         "n_samples": 0, "n_generated": 0, "n_failed": 0, "n_scored": 0, "n_expected": asked}
        for m, t in sorted(wanted)
        if (m, t, expected.backbone) not in present and asked
    ]  # fmt: skip
    cells = pd.concat([found, pd.DataFrame(missing)], ignore_index=True) if missing else found
    return cells.drop(columns="n_samples")


def materialize_results(
    wh: Warehouse,
    dataset_version: str,
    run_id: str,
    expected: Expected,
    *,
    publish_partial: bool = False,
) -> ResultVersion | None:
    params = {"samples": expected.all_samples}
    found = wh.con.execute(
        f"SELECT count(*), md5(coalesce(string_agg(generation_id || '|' || score || '|' || "
        f"coalesce(value::VARCHAR, ''), ',' ORDER BY generation_id, score), '')) FROM ({_CURRENT})",
        params,
    ).fetchall()
    n_rows, scores_hash = int(found[0][0]), str(found[0][1])
    cells = _cells(wh, expected)
    if not n_rows and not (cells["n_generated"].sum() + cells["n_failed"].sum()):
        return None  # nothing generated yet (e.g. every sample waits for review)
    cells = cells.sort_values(["method", "variant", "target_words", "backbone"])
    waiting = [
        {"sample_id": sample, "reason": why} for sample, why in sorted(expected.waiting.items())
    ]
    cells_key = cells.to_csv(index=False) + repr(waiting)
    content_hash = str(wh.scalar("SELECT md5(? || ?)", [scores_hash, cells_key]))
    partial = bool((cells["n_scored"] < cells["n_expected"]).any())
    published = not partial or publish_partial
    # Only the latest version is reused: were an older one with the same content reused,
    # the `leaderboard` view (the latest version) would show something else than now.
    latest = wh.con.execute(
        "SELECT version, content_hash, published FROM res_versions ORDER BY version DESC LIMIT 1"
    ).fetchall()
    if latest and latest[0][1].split("@", 1)[0] == content_hash:
        version = int(latest[0][0])
        if published and not latest[0][2]:  # a partial version now published on purpose
            wh.con.execute("UPDATE res_versions SET published = true WHERE version = ?", [version])
        return ResultVersion(
            version, False, n_rows, content_hash, partial, published or bool(latest[0][2])
        )
    version = int(wh.scalar("SELECT coalesce(max(version), 0) + 1 FROM res_versions"))
    # Content an older version already had (results went back, e.g. another --samples) is
    # a new version all the same; its stored hash names the version to stay unique.
    stored_hash = content_hash
    if wh.scalar("SELECT count(*) FROM res_versions WHERE content_hash = ?", [content_hash]):
        stored_hash = f"{content_hash}@{version}"
    cells.insert(0, "version", version)
    with wh.transaction():
        wh.con.execute(
            f"INSERT INTO res_scores (version, {_COLUMNS}) "
            f"SELECT {version}, {_COLUMNS} FROM ({_CURRENT})",
            params,
        )
        wh.upsert(
            "res_cells",
            cells.to_dict(orient="records"),
            ("version", "method", "variant", "target_words", "backbone"),
        )
        wh.upsert(
            "res_waiting",
            [{"version": version, **w} for w in waiting],
            ("version", "sample_id"),
        )
        wh.con.execute(
            "INSERT INTO res_versions (version, created_at, run_id, content_hash, "
            "dataset_version, n_generations, n_rows, partial, published) SELECT ?, now(), ?, "
            "?, ?, (SELECT count(DISTINCT generation_id) FROM res_scores WHERE version = ?), "
            "?, ?, ?",
            [version, run_id, stored_hash, dataset_version, version, n_rows, partial, published],
        )
    return ResultVersion(version, True, n_rows, content_hash, partial, published)
