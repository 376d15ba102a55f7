"""Versioned results (docs/design.md §10): each materialization with new content is a new immutable
version in `res_scores`, with each leaderboard cell's account in `res_cells` (expected,
generated, failed, scored); content equal to the latest version's reuses it.

A version holds what its run asked for, its scope (`res_versions.scope_*`: dataset version, samples,
method variants, lengths, backbone, judge), and nothing else: a summary another run made
for another method, length or sample is not in it, however current. A narrower run makes a
narrower version; `scope_changes` (warehouse/queries/results.py) says what the
leaderboard no longer shows when it replaces a wider one.

A failed generation or an unscored one is a result, not an absence, and so is a sample that
waits for review: it is expected (`res_waiting` says why it is missing). A version whose cells
miss anything is marked `partial`, and the leaderboard shows n scored / n expected. A partial
version is not `published` (it does not replace the last complete one as the default
`leaderboard`) unless the run allows it (`publish_partial`).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from lilo.warehouse.db import Warehouse

__all__ = ["Expected", "ResultVersion", "materialize_results"]

# A generation `g` of fct_generations in the version's scope (named parameters).
_IN_SCOPE = """list_contains($samples, g.sample_id)
    AND list_contains($variants, coalesce(nullif(g.variant, ''), g.method))
    AND list_contains($lengths, g.target_words) AND g.backbone = $backbone"""
_CURRENT = f"""
    SELECT g.generation_id, g.sample_id, g.method, g.target_words, g.backbone,
           s.score, s.value, g.tokens_in, g.tokens_out,
           coalesce(nullif(g.variant, ''), g.method) AS variant,
           coalesce(g.rotation, 0) AS rotation, s.judge, g.cost
    FROM fct_scores s
    JOIN fct_generations g USING (generation_id)
    WHERE {_IN_SCOPE}
"""
_COLUMNS = (
    "generation_id, sample_id, method, target_words, backbone, score, value, "
    "tokens_in, tokens_out, variant, rotation, judge, cost"
)


@dataclass(frozen=True)
class Expected:
    """What a run asked for, the scope of the result version it makes: these samples x
    method variants x lengths on this backbone, judged by `judge`; and the samples that
    wait for review (id -> why): expected as well, with nothing to show yet."""

    samples: list[str]
    methods: Iterable[str]
    target_words: Iterable[int]
    backbone: str
    waiting: dict[str, str] = field(default_factory=dict)
    judge: str = ""

    @property
    def all_samples(self) -> list[str]:
        return [*self.samples, *sorted(set(self.waiting) - set(self.samples))]

    def params(self) -> dict[str, Any]:
        """The scope as `_IN_SCOPE`'s parameters."""
        return {
            "samples": self.all_samples,
            "variants": list(dict.fromkeys(self.methods)),
            "lengths": sorted(set(self.target_words)),
            "backbone": self.backbone,
        }


@dataclass(frozen=True)
class ResultVersion:
    version: int
    created: bool
    n_rows: int
    content_hash: str
    partial: bool
    published: bool


def _cells(wh: Warehouse, expected: Expected, headline: Sequence[str]) -> pd.DataFrame:
    """Each cell of the scope (variant x length, papers in the sample's own order): how
    many summaries were expected, generated, failed and fully scored (have every score of
    `headline`)."""
    found = wh.con.execute(
        f"""
        WITH gens AS (
            SELECT generation_id, sample_id, method,
                   coalesce(nullif(variant, ''), method) AS variant, target_words, backbone, error
            FROM fct_generations AS g
            WHERE {_IN_SCOPE} AND coalesce(rotation, 0) = 0
        ),
        headline AS (
            SELECT generation_id FROM fct_scores
            WHERE list_contains($headline, score)
            GROUP BY generation_id HAVING count(DISTINCT score) = len($headline)
        )
        SELECT method, variant, target_words, backbone,
               count(*) FILTER (WHERE error = '') AS n_generated,
               count(*) FILTER (WHERE error <> '') AS n_failed,
               count(*) FILTER (WHERE generation_id IN (SELECT generation_id FROM headline))
                   AS n_scored
        FROM gens GROUP BY ALL
        """,
        {**expected.params(), "headline": headline},
    ).df()
    asked = len(expected.all_samples)
    found["n_expected"] = asked
    present = set(zip(found["variant"], found["target_words"], strict=True))
    scope = expected.params()
    missing = [
        {"method": v.split("[")[0], "variant": v, "target_words": t, "backbone": expected.backbone,
         "n_generated": 0, "n_failed": 0, "n_scored": 0, "n_expected": asked}
        for v in scope["variants"] for t in scope["lengths"]
        if (v, t) not in present and asked
    ]  # fmt: skip
    return pd.concat([found, pd.DataFrame(missing)], ignore_index=True) if missing else found


def materialize_results(
    wh: Warehouse,
    dataset_version: str,
    run_id: str,
    expected: Expected,
    *,
    scored_by: Sequence[str],
    publish_partial: bool = False,
) -> ResultVersion | None:
    params = expected.params()
    found = wh.con.execute(
        f"SELECT count(*), md5(coalesce(string_agg(generation_id || '|' || score || '|' || "
        f"coalesce(value::VARCHAR, ''), ',' ORDER BY generation_id, score), '')) FROM ({_CURRENT})",
        params,
    ).fetchall()
    n_rows, scores_hash = int(found[0][0]), str(found[0][1])
    cells = _cells(wh, expected, list(scored_by))
    if not n_rows and not (cells["n_generated"].sum() + cells["n_failed"].sum()):
        return None  # nothing generated yet (e.g. every sample waits for review)
    cells = cells.sort_values(["method", "variant", "target_words", "backbone"])
    waiting = [
        {"sample_id": sample, "reason": why} for sample, why in sorted(expected.waiting.items())
    ]
    dataset_samples = int(
        wh.scalar("SELECT count(*) FROM dim_samples WHERE dataset_version = ?", [dataset_version])
    )
    scope = {**params, "dataset_samples": dataset_samples, "judge": expected.judge}
    # the same scope asked in another order is the same content
    same = {**scope, "variants": sorted(scope["variants"])}
    cells_key = cells.to_csv(index=False) + repr(waiting) + repr(sorted(same.items()))
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
            "dataset_version, n_generations, n_rows, partial, published, scope_samples, "
            "dataset_samples, scope_variants, scope_target_words, scope_backbone, scope_judge) "
            "SELECT ?, now(), ?, ?, "
            "?, (SELECT count(DISTINCT generation_id) FROM res_scores WHERE version = ?), "
            "?, ?, ?, ?, ?, ?, ?, ?, ?",
            [version, run_id, stored_hash, dataset_version, version, n_rows, partial,
             published, scope["samples"], dataset_samples, scope["variants"],
             scope["lengths"], expected.backbone, expected.judge],
        )  # fmt: skip
    return ResultVersion(version, True, n_rows, content_hash, partial, published)
