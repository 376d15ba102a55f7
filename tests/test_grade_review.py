"""Is the judge right: the judge's QA grades as review items, a seeded sample of them, the
reviewed file's grades validated, agreement and weighted kappa per judge by hand."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from tasks.qa.grade_review import GradeVerdict, agreement, grade_items, sample_grades

ROWS = [
    {
        "generation_id": "g1",
        "judge": "openai:judge-a",
        "dataset_version": "v1",
        "detail": '{"questions": [{"qa_id": "q1", "question": "Q1?", "answer": "A1", "score": 1},'
        ' {"qa_id": "q2", "question": "Q2?", "answer": "A2", "score": 0.5}]}',
    },
    {
        "generation_id": "g2",
        "judge": "openai:judge-a",
        "dataset_version": "v1",
        "detail": {"questions": [{"qa_id": "q1", "question": "Q1?", "answer": "B", "score": 0}]},
    },
]


def test_items_carry_question_gold_answer_and_the_judges_grade() -> None:
    items = grade_items(ROWS, {"q1": "gold one", "q2": "gold two"})
    assert [(i["generation_id"], i["qa_id"], i["judge_grade"]) for i in items] == [
        ("g1", "q1", 1.0),
        ("g1", "q2", 0.5),
        ("g2", "q1", 0.0),
    ]
    assert items[0]["gold_answer"] == "gold one" and items[0]["human_grade"] is None
    assert sample_grades(items, 2, seed=1) == sample_grades(items, 2, seed=1)
    assert len(sample_grades(items, 10)) == 3


def test_a_grade_off_the_tiers_is_refused() -> None:
    assert (
        GradeVerdict.model_validate_json(
            '{"generation_id": "g", "qa_id": "q", "human_grade": 0.75, "extra": 1}'
        ).human_grade
        == 0.75
    )
    with pytest.raises(ValidationError, match="one of 0, 0.25"):
        GradeVerdict.model_validate_json('{"generation_id": "g", "qa_id": "q", "human_grade": 0.6}')


def test_agreement_and_kappa_per_judge_by_hand() -> None:
    def rows(judge: str, pairs: list[tuple[float, float]]) -> list[dict[str, object]]:
        return [
            {"judge": judge, "dataset_version": "v1", "human_grade": h, "judge_grade": j}
            for h, j in pairs
        ]

    # Judge a: human (1, 1, 0, 0) vs judge (1, 1, 0, 0.25). Exact 3/4. On the five tiers
    # (weights |i-j|/4), observed disagreement (1/4)(1/4) = 1/16; marginals humans
    # (.5 at 0, .5 at 1), judge (.25 at 0, .25 at .25, .5 at 1): chance disagreement
    # .5*.25*(1/4) + .5*.5*1 + .5*.25*1 + .5*.25*(3/4) = .03125 + .25 + .125 + .09375 = .5;
    # kappa = 1 - (1/16)/.5 = .875.
    a = rows("a", [(1.0, 1.0), (1.0, 1.0), (0.0, 0.0), (0.0, 0.25)])
    b = rows("b", [(1.0, 1.0), (0.5, 0.5)])
    found = agreement(a + b)
    assert found == [
        {"judge": "a", "dataset_version": "v1", "n": 4, "exact_agreement": 0.75,
         "weighted_kappa": 0.875},
        {"judge": "b", "dataset_version": "v1", "n": 2, "exact_agreement": 1.0,
         "weighted_kappa": 1.0},
    ]  # fmt: skip
