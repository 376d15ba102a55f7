"""Is the judge right? Reviewers grade a random sample of the judge's QA grades (question,
gold answer, the answer given, the judge's grade) on the judge's five tiers; lilo reports,
per judge and dataset version, exact agreement and Cohen's weighted kappa (linear weights
over the tiers) between the humans and the judge (tasks/stats.py). Pure: judged questions
in, sampled items, validated grades and agreement out."""

from __future__ import annotations

import json
import random
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, create_model, field_validator

from lilo.tasks.qa.parse import TIERS
from lilo.tasks.stats import exact_agreement, weighted_kappa

__all__ = [
    "GradeEntry",
    "GradeVerdict",
    "agreement",
    "grade_entry_model",
    "grade_items",
    "sample_grades",
]

# The judge's tiers as a form offers them: a choice among words, read back as numbers.
Tier = Literal["0", "0.25", "0.5", "0.75", "1"]


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


class GradeEntry(BaseModel):
    """One answer's entry in the grade-review form: the reviewer's grade on the tiers."""

    model_config = ConfigDict(extra="forbid")

    human_grade: Tier

    def grade(self) -> float:
        return float(self.human_grade)


def grade_entry_model(n: int, total: int, item: dict[str, Any]) -> tuple[type[GradeEntry], dict]:
    """The form entry of the `n`th of `total` items: a GradeEntry subclass whose grade
    carries the item's context (question, gold answer, answer given, the judge's grade),
    and its field's keyword arguments (the ids in the title: shown, never editable)."""
    context = (
        f"QUESTION: {item['question']}\n\nGOLD ANSWER: {item['gold_answer']}\n\n"
        f"ANSWER GIVEN (from the summary): {item['answer']}\n\n"
        f"THE JUDGE'S GRADE: {item['judge_grade']:g} ({item['judge']})"
    )
    model = create_model(
        f"Grade{n:02d}",
        __base__=GradeEntry,
        human_grade=(Tier, Field(title=f"Your grade of answer {n}", description=context)),
    )
    title = f"Answer {n} of {total} · generation {item['generation_id']} · QA {item['qa_id']}"
    return model, {"title": title}


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
