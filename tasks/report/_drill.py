"""A drill-down to every answer of a result version: per summary, its text, its S_l, S_c and
S_q, each QA pair with the answer given from the summary beside the gold one and the judge's
grade and reason, and the checklist's grades. `lilo show` prints these; the report writes
them as per-sample pages that its leaderboard cells link to."""

from __future__ import annotations

import json
from dataclasses import dataclass

import duckdb

__all__ = ["Answer", "SummaryDetail", "read_details"]

_SUMMARIES = """
SELECT DISTINCT r.generation_id, r.sample_id, coalesce(r.variant, r.method) AS method,
    r.method AS base_method, r.target_words, r.backbone, g.words, g.text
FROM res_scores AS r JOIN fct_generations AS g USING (generation_id)
WHERE r.version = $version AND coalesce(r.rotation, 0) = 0
    AND ($sample IS NULL OR r.sample_id = $sample)
    AND ($method IS NULL OR $method IN (r.method, coalesce(r.variant, r.method)))
    AND ($words IS NULL OR r.target_words = $words)
ORDER BY r.sample_id,
    CASE r.method
        WHEN 'single' THEN 1 WHEN 'agentwrite' THEN 2 WHEN 'compress' THEN 3
        WHEN 'ral_writer' THEN 4 ELSE 5
    END,
    method, r.target_words
"""

_SCORES = """
SELECT generation_id, score, value, detail FROM fct_scores
WHERE list_contains($ids, generation_id) AND score IN ('length', 'consistency', 'quality')
"""


_HEADLINE = ("length", "consistency", "quality")


@dataclass(frozen=True)
class Answer:
    """One QA pair asked of a summary: the gold answer, the one given from the summary, and
    the judge's grade (0 to 1) and reason."""

    qa_id: str
    kind: str
    position: int
    question: str
    gold: str
    given: str
    grade: float | None
    reason: str


@dataclass(frozen=True)
class SummaryDetail:
    generation_id: str
    sample_id: str
    method: str  # the variant, as the leaderboard names it
    target_words: int
    backbone: str
    words: int
    text: str
    scores: dict[str, float | None]  # length, consistency, quality (x100)
    answers: tuple[Answer, ...]
    checklist: dict[str, float]  # quality aspect -> grade (x100)

    @property
    def anchor(self) -> str:
        """The summary's id on its sample's page."""
        return f"{self.method}-{self.target_words}"


def read_details(
    con: duckdb.DuckDBPyConnection,
    version: int,
    sample_id: str | None = None,
    method: str | None = None,
    target_words: int | None = None,
) -> list[SummaryDetail]:
    """The version's summaries (each sample's own paper order), optionally one sample's, one
    method's (a method or a variant name) and one length's."""
    params = {"version": version, "sample": sample_id, "method": method, "words": target_words}
    summaries = con.execute(_SUMMARIES, params).df().to_dict(orient="records")
    ids = [s["generation_id"] for s in summaries]
    scores: dict[str, dict[str, tuple[float | None, dict]]] = {}
    for gid, score, value, detail in con.execute(_SCORES, {"ids": ids}).fetchall():
        scores.setdefault(gid, {})[score] = (value, json.loads(detail) if detail else {})
    asked = {
        q["qa_id"]
        for by_score in scores.values()
        for q in by_score.get("consistency", (None, {}))[1].get("questions", [])
    }
    gold = dict(
        con.execute(
            "SELECT qa_id, answer FROM fct_qa_pairs WHERE list_contains(?, qa_id)", [sorted(asked)]
        ).fetchall()
    )
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
                scores={k: found.get(k, (None, {}))[0] for k in _HEADLINE},
                answers=tuple(
                    Answer(
                        qa_id=q["qa_id"],
                        kind=q.get("kind", ""),
                        position=int(q.get("position", 0)),
                        question=q.get("question", ""),
                        gold=gold.get(q["qa_id"], ""),
                        given=q.get("answer", ""),
                        grade=q.get("score"),
                        reason=q.get("reason", ""),
                    )
                    for q in questions
                ),
                checklist=found.get("quality", (None, {}))[1].get("aspects", {}),
            )
        )
    return details
