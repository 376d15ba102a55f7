"""Is the judge right? Reviewers grade the judge's QA grades (docs/design.md §6) three ways,
as they review QA pairs (flows/qa_review.py): a Prefect UI form per batch (`grade_review`),
the CLI, and JSONL imports, all recorded by `record_grades` in `fct_grade_reviews`
(tasks/qa/grade_review.py)."""

from __future__ import annotations

import uuid
from typing import Any, ClassVar

from prefect import flow
from prefect.input import RunInput
from prefect.runtime import flow_run
from pydantic import Field, create_model

from lilo.flows._review_forms import announce_form, named_reviewer, now, wait_for_form
from lilo.flows._stage import log, open_warehouse
from lilo.tasks.config import Settings
from lilo.tasks.config_loading import run_settings
from lilo.tasks.qa.grade_review import GradeVerdict, grade_entry_model, grade_items, sample_grades
from lilo.warehouse import Warehouse
from lilo.warehouse.queries.datasets import qa_answers
from lilo.warehouse.queries.grades import judged_consistency

__all__ = ["GradeForm", "grade_form", "grade_review", "judged_items", "record_grades"]


class GradeForm(RunInput):
    """The Prefect UI form of one batch of the judge's QA grades: the reviewer's name once,
    then a fixed entry per graded answer (`grade_01`, ...), as `ReviewForm` has per pair."""

    reviewer: str = Field(
        title="Your name", min_length=1, description="Recorded with every grade in this form."
    )
    items: ClassVar[tuple[tuple[str, str], ...]] = ()  # (generation_id, qa_id) per entry

    def verdicts(self) -> list[GradeVerdict]:
        return [
            GradeVerdict(
                generation_id=generation_id,
                qa_id=qa_id,
                human_grade=getattr(self, f"grade_{n:02d}").grade(),
            )
            for n, (generation_id, qa_id) in enumerate(self.items, 1)
        ]


def grade_form(items: list[dict[str, Any]], reviewer: str | None = None) -> type[GradeForm]:
    """The form of one batch of judge grades (`grade_items` rows): a required grade per
    answer, with its question, gold answer, the answer given and the judge's grade; the
    reviewer's name prefilled when known."""
    fields: dict[str, Any] = named_reviewer(GradeForm, reviewer)
    for n, item in enumerate(items, 1):
        model, field = grade_entry_model(n, len(items), item)
        fields[f"grade_{n:02d}"] = (model, Field(**field))
    form = create_model("GradeForm", __base__=GradeForm, **fields)
    form.items = tuple((i["generation_id"], i["qa_id"]) for i in items)
    form._description = (
        f"Grade {len(items)} answers as the judge should have. Give your name once, then for "
        "each read the question, the gold answer and the answer given, and choose 0, 0.25, "
        "0.5, 0.75 or 1 on the judge's scale. Every answer needs a grade."
    )
    return form


def judged_items(wh: Warehouse, dataset_version: str) -> list[dict[str, Any]]:
    """Every question the judge graded in the version's summaries (own paper order), with
    its gold answer: the items reviewers grade."""
    rows = judged_consistency(wh, dataset_version)
    gold = qa_answers(wh, dataset_version)
    return grade_items(rows, gold)


def record_grades(
    settings: Settings, verdicts: list[tuple[str, GradeVerdict]], reviewer: str
) -> tuple[int, list[str]]:
    """Record reviewers' grades of the judge's grades in `fct_grade_reviews` (a reviewer's
    grade again replaces theirs): `verdicts` are (where, verdict), `where` naming the
    verdict's origin in problems (a file's `path:line`, a form's entry). Returns (rows
    recorded, problems: verdicts with no judge grade of that generation and question)."""
    recorded_at = now()
    with open_warehouse(settings) as wh:
        judged = {
            (i["generation_id"], i["qa_id"]): i for i in judged_items(wh, settings.dataset_version)
        }
        rows, problems = [], []
        for where, verdict in verdicts:
            item = judged.get((verdict.generation_id, verdict.qa_id))
            if item is None:
                problems.append(f"{where}: no judge grade for this generation and question here")
                continue
            rows.append(
                {
                    "generation_id": item["generation_id"],
                    "qa_id": item["qa_id"],
                    "dataset_version": item["dataset_version"],
                    "judge": item["judge"],
                    "judge_grade": item["judge_grade"],  # the warehouse's, not the input's
                    "human_grade": verdict.human_grade,
                    "reviewer": reviewer,
                    "reviewed_at": recorded_at,
                }
            )
        wh.upsert("fct_grade_reviews", rows, ("generation_id", "qa_id", "reviewer"), update=True)
    return len(rows), problems


@flow(name="grade-review", log_prints=True)
def grade_review(
    n: int = 50,
    seed: int = 0,
    overrides: dict[str, Any] | None = None,
    reviewer: str | None = None,
) -> dict[str, Any]:
    """Pause with a form per batch (`qa.review_batch`) of a seeded random sample of `n` of
    the judge's QA grades (the sample `lilo review grades-export` writes); each answered
    form is recorded as `grades-import` records a file. A form left unanswered for
    `qa.review_timeout_s` ends the flow."""
    settings = run_settings(overrides)
    run_id = flow_run.get_id() or str(uuid.uuid4())
    with open_warehouse(settings) as wh:
        items = sample_grades(judged_items(wh, settings.dataset_version), n, seed)
    totals: dict[str, Any] = {"items": len(items), "batches": 0, "grades": 0, "problems": []}
    totals["timed_out"] = False
    size = settings.qa.review_batch
    for start in range(0, len(items), size):
        batch = items[start : start + size]
        key = f"grades-{totals['batches'] + 1}"
        announce_form(
            "grade-review",
            key,
            f"{len(batch)} of the {len(items)} sampled judge grades in {settings.dataset_version}",
            run_id,
            "lilo review grades-export FILE, then grades-import FILE --reviewer NAME",
            settings.qa.review_timeout_s,
        )
        answer = wait_for_form(grade_form(batch, reviewer), key, settings.qa)
        if answer is None:
            log.info("grade-review: no answer in %s s", settings.qa.review_timeout_s)
            totals["timed_out"] = True
            break
        verdicts = [(f"{key} entry {i}", v) for i, v in enumerate(answer.verdicts(), 1)]
        recorded, problems = record_grades(settings, verdicts, answer.reviewer)
        totals["batches"] += 1
        totals["grades"] += recorded
        totals["problems"] += problems
        for problem in problems:
            log.warning("grade-review: not recorded: %s", problem)
        log.info(
            "grade-review: form %s: %s grades recorded by %s, %s not recorded",
            key,
            recorded,
            answer.reviewer,
            len(problems),
        )
    log.info(
        "grade-review: %s grades recorded in %s forms; `lilo review agreement` compares them "
        "with the judge",
        totals["grades"],
        totals["batches"],
    )
    return totals
