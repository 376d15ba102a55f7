"""Is the judge right? Reviewers grade a random sample of the judge's QA grades (question,
gold answer, the answer given, the judge's grade) on the judge's five tiers; lilo reports,
per judge and dataset version, exact agreement and Cohen's weighted kappa (linear weights
over the tiers) between the humans and the judge (tasks/stats.py). Pure: judged questions
in, sampled items, validated grades and agreement out."""

from __future__ import annotations

import json
import random
from typing import Any

from pydantic import BaseModel, ConfigDict, field_validator

from tasks.scoring._judge import TIERS
from tasks.stats import exact_agreement, weighted_kappa

__all__ = ["GradeVerdict", "agreement", "grade_items", "sample_grades"]


def grade_items(rows: list[dict[str, Any]], gold: dict[str, str]) -> list[dict[str, Any]]:
    """Every graded question of the `consistency` score rows (generation_id, judge,
    dataset_version, detail) as one item; `gold` maps qa_id to its gold answer."""
    items = []
    for row in rows:
        detail = row["detail"]
        detail = json.loads(detail) if isinstance(detail, str) else detail
        for q in detail.get("questions", []):
            items.append(
                {
                    "generation_id": row["generation_id"],
                    "qa_id": q["qa_id"],
                    "dataset_version": row["dataset_version"],
                    "judge": row["judge"],
                    "question": q["question"],
                    "gold_answer": gold.get(q["qa_id"], ""),
                    "answer": q["answer"],
                    "judge_grade": float(q["score"]),
                    "human_grade": None,
                }
            )
    return sorted(items, key=lambda i: (i["generation_id"], i["qa_id"]))


def sample_grades(items: list[dict[str, Any]], n: int, seed: int = 0) -> list[dict[str, Any]]:
    """A seeded random sample of `n` items (all of them when there are fewer)."""
    return random.Random(seed).sample(items, min(n, len(items)))


class GradeVerdict(BaseModel):
    """One line of a reviewed file: the item's ids and the human's grade on the tiers."""

    model_config = ConfigDict(extra="ignore")

    generation_id: str
    qa_id: str
    human_grade: float

    @field_validator("human_grade")
    @classmethod
    def _a_tier(cls, value: float) -> float:
        if value not in TIERS:
            raise ValueError(f"must be one of 0, 0.25, 0.5, 0.75, 1; got {value}")
        return value


def agreement(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Per judge and dataset version (rows: judge, dataset_version, judge_grade,
    human_grade): n, exact agreement and linearly weighted kappa."""
    groups: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for r in rows:
        groups.setdefault((r["judge"], r["dataset_version"]), []).append(r)
    out = []
    for (judge, version), part in sorted(groups.items()):
        humans = [r["human_grade"] for r in part]
        judged = [r["judge_grade"] for r in part]
        out.append(
            {
                "judge": judge,
                "dataset_version": version,
                "n": len(part),
                "exact_agreement": round(exact_agreement(humans, judged), 4),
                "weighted_kappa": round(weighted_kappa(humans, judged, TIERS), 4),
            }
        )
    return out
