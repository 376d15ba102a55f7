"""The drill-down of a result version (tasks/report_records.py): each summary with its
scores, the answers given from it beside the gold ones, and its checklist grades."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

import duckdb

from lilo.tasks.report_records import Answer, SummaryDetail

__all__ = ["read_details", "version_samples"]

_SUMMARIES = """
SELECT DISTINCT r.generation_id, r.sample_id, coalesce(r.variant, r.method) AS method,
    r.method AS base_method, r.target_words, r.backbone, g.words, g.text,
    json_extract(g.structure, '$.fit_input.tokens_left_out')::BIGINT AS left_out
FROM res_scores AS r JOIN fct_generations AS g USING (generation_id)
WHERE r.version = $version AND coalesce(r.rotation, 0) = 0
    AND ($sample IS NULL OR r.sample_id = $sample)
    AND ($method IS NULL OR $method IN (r.method, coalesce(r.variant, r.method)))
    AND ($words IS NULL OR r.target_words = $words)
ORDER BY r.sample_id, method_rank(r.method), method, r.target_words
"""

_SCORES = """
SELECT generation_id, score, value, detail FROM fct_scores
WHERE list_contains($ids, generation_id) AND list_contains($scores, score)
"""


_SAMPLES = "SELECT DISTINCT sample_id FROM res_scores WHERE version = ? ORDER BY 1"
_GOLD = "SELECT qa_id, answer FROM fct_qa_pairs WHERE list_contains(?, qa_id)"


def read_details(
    con: duckdb.DuckDBPyConnection,
    version: int,
    sample_id: str | None = None,
    method: str | None = None,
    target_words: int | None = None,
    *,
    headlines: Sequence[str],
) -> list[SummaryDetail]:
    """The version's summaries (each sample's own paper order) with their values of `headlines`
    (the leaderboard's scores, in column order), optionally one sample's, one method's (a method or
    a variant name) and one length's."""
    params = {"version": version, "sample": sample_id, "method": method, "words": target_words}
    summaries = con.execute(_SUMMARIES, params).df().to_dict(orient="records")
    ids = [s["generation_id"] for s in summaries]
    headlines = list(headlines)  # a list, as DuckDB takes one
    scores: dict[str, dict[str, tuple[float | None, dict]]] = {}
    found_scores = con.execute(_SCORES, {"ids": ids, "scores": headlines}).fetchall()
    for gid, score, value, detail in found_scores:
        scores.setdefault(gid, {})[score] = (value, json.loads(detail) if detail else {})
    asked = {
        q["qa_id"]
        for by_score in scores.values()
        for q in by_score.get("consistency", (None, {}))[1].get("questions", [])
    }
    gold = dict(con.execute(_GOLD, [sorted(asked)]).fetchall())
    details = []
    for s in summaries:
        found = scores.get(s["generation_id"], {})
        questions = found.get("consistency", (None, {}))[1].get("questions", [])
        details.append(
            SummaryDetail(
                generation_id=s["generation_id"],
                sample_id=s["sample_id"],
                method=s["method"],
                target_words=int(s["target_words"]),
                backbone=s["backbone"],
                words=int(s["words"]),
                text=s["text"],
                scores={k: found.get(k, (None, {}))[0] for k in headlines},
                answers=tuple(
                    Answer(
                        qa_id=q["qa_id"],
                        kind=q.get("kind", ""),
                        position=int(q["position"]) if q.get("position") else None,
                        question=q.get("question", ""),
                        gold=gold.get(q["qa_id"], ""),
                        given=q.get("answer", ""),
                        grade=q.get("score"),
                        reason=q.get("reason", ""),
                    )
                    for q in questions
                ),
                checklist=found.get("quality", (None, {}))[1].get("aspects", {}),
                left_out=_count(s["left_out"]),
            )
        )
    return details


def _count(value: Any) -> int | None:
    """A nullable count as DataFrame rows hold it (NULL is None or NaN)."""
    return None if value is None or value != value else int(value)


def version_samples(con: duckdb.DuckDBPyConnection, version: int) -> list[str]:
    """The samples result version `version` holds, by id."""
    return [r[0] for r in con.execute(_SAMPLES, [version]).fetchall()]
