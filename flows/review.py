"""Human review of QA pairs (docs/design.md §6): the Prefect UI form, and the one writer of
decisions
that the UI, the CLI and JSONL imports share. The judge's QA grades are reviewed the same
three ways (`grade_review`, `record_grades`; tasks/qa/grade_review.py).

The review flow pauses with a `RunInput` form per batch of pending pairs; it holds no
warehouse connection while it waits, so a nightly run is never blocked by a reviewer. A
form's pairs may be decided elsewhere (the CLI, another form) while it is open: what the
form then says differently is reported as a conflict, in the terminal, the run's logs and
the batch's artifact, and not applied.
"""

from __future__ import annotations

import logging
import uuid
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, ClassVar

from prefect import flow
from prefect.exceptions import FlowPauseTimeout
from prefect.flow_runs import pause_flow_run
from prefect.input import RunInput
from prefect.runtime import flow_run
from prefect.settings import get_current_settings
from pydantic import Field, create_model

from lilo.flows._artifacts import publish
from lilo.flows._load import load_qa
from lilo.flows._stage import open_warehouse
from lilo.tasks.config import Settings, run_settings
from lilo.tasks.qa.grade_review import GradeVerdict, grade_entry_model, grade_items, sample_grades
from lilo.tasks.qa.review import Applied, Verdict, apply_verdicts, pair_decision_model
from lilo.tasks.records import QAPair, Quarantine
from lilo.tasks.reporting import Artifact
from lilo.warehouse import Warehouse
from lilo.warehouse.queries import reviews
from lilo.warehouse.queries.datasets import qa_answers
from lilo.warehouse.queries.grades import judged_consistency
from lilo.warehouse.queries.reviews import load_decisions

# The logger lilo's stages use: Prefect sends it to the run's logs and the terminal at INFO
# (PREFECT_LOGGING_EXTRA_LOGGERS=lilo) where its own loggers are kept at WARNING.
log = logging.getLogger("lilo")

__all__ = [
    "GradeForm",
    "ReviewForm",
    "form_address",
    "grade_form",
    "grade_review",
    "judged_items",
    "load_decisions",
    "paper_titles",
    "pending_count",
    "qa_review",
    "record_grades",
    "record_verdicts",
    "review_form",
    "reviewable_pairs",
]


class ReviewForm(RunInput):
    """The Prefect UI form: the reviewer's name once, then one fixed entry per pair
    (`pair_01`, `pair_02`, ...; see `review_form`). Fields, not a list: a list would let
    the UI add, remove and reorder entries, and the pairs' ids would be editable."""

    reviewer: str = Field(
        title="Your name",
        min_length=1,
        description="Recorded with every decision in this form.",
    )
    qa_ids: ClassVar[tuple[str, ...]] = ()
    shown_at: ClassVar[datetime | None] = None

    def verdicts(self) -> list[Verdict]:
        """One verdict per pair, in the form's order, as shown when the form was made."""
        return [
            getattr(self, _field(n)).verdict(qa_id, self.shown_at)
            for n, qa_id in enumerate(self.qa_ids, 1)
        ]


def _field(n: int) -> str:
    return f"pair_{n:02d}"


def _named(form: type[RunInput], reviewer: str | None) -> dict[str, Any]:
    """The form's `reviewer` field with `reviewer` as its value, when given."""
    if not reviewer:
        return {}
    field = form.model_fields["reviewer"]
    return {"reviewer": (str, Field(default=reviewer, title=field.title, min_length=1,
                                    description=field.description))}  # fmt: skip


def review_form(
    pairs: list[QAPair], titles: dict[str, str], reviewer: str | None = None
) -> type[ReviewForm]:
    """The form of one batch: a required decision per pair, its question, answer and
    evidence (with each paper's title) beside it, the text prefilled for edits; the
    reviewer's name prefilled when known."""
    fields: dict[str, Any] = _named(ReviewForm, reviewer)
    for n, pair in enumerate(pairs, 1):
        model, field = pair_decision_model(n, len(pairs), pair, titles)
        fields[_field(n)] = (model, Field(**field))
    form = create_model("ReviewForm", __base__=ReviewForm, **fields)
    form.qa_ids = tuple(p.qa_id for p in pairs)
    form.shown_at = _now()
    form._description = (
        f"Review {len(pairs)} QA pairs. Give your name once, then for each pair read the "
        "question, the answer and the evidence, and choose approve, reject (with a reason) "
        "or edit (change the question or answer). Every pair needs a decision."
    )
    return form


def reviewable_pairs(
    wh: Warehouse,
    dataset_version: str,
    statuses: tuple[str, ...] = ("pending",),
    sample_id: str | None = None,
) -> list[QAPair]:
    """Pairs of the version in `statuses`, by sample then round; optionally one sample."""
    return [
        p
        for sid, pairs in sorted(load_qa(wh, dataset_version).items())
        if sample_id in (None, sid)
        for p in pairs
        if p.status in statuses
    ]


def pending_count(db_path: Path, dataset_version: str) -> int:
    """Pairs of the version waiting for a reviewer (for the end-of-run hint)."""
    with Warehouse(db_path) as wh:
        return reviews.pending_count(wh, dataset_version)


def _now() -> datetime:
    """The warehouse's time: naive UTC."""
    return datetime.now(UTC).replace(tzinfo=None)


def record_verdicts(
    settings: Settings,
    verdicts: list[Verdict],
    reviewer: str,
    channel: str,
    run_id: str | None = None,
) -> Applied:
    """Apply verdicts against the pairs' state and last decisions now, and write the
    decisions, the pairs' new state and the problems (quarantined, stage `review`) in one
    transaction."""
    run_id = run_id or f"{channel}-review-{uuid.uuid4()}"
    with open_warehouse(settings) as wh:
        pairs = {p.qa_id: p for ps in load_qa(wh, settings.dataset_version).values() for p in ps}
        latest = {d.qa_id: d for d in load_decisions(wh, settings.dataset_version)}
        applied = apply_verdicts(verdicts, pairs, reviewer, channel, _now(), latest)
        extra = {"run_id": run_id}
        quarantine = [Quarantine(p.qa_id, "review", p.reason, p.message) for p in applied.problems]
        with wh.transaction():
            wh.upsert("fct_qa_decisions", applied.decisions, ("decision_id",), extra=extra)
            wh.upsert("fct_qa_pairs", applied.changed, ("qa_id",), update=True, extra=extra)
            wh.upsert("quarantine", quarantine, ("item_id", "stage"), update=True, extra=extra)
    return applied


def form_address(run_id: str) -> str:
    """Where a paused run's form is: PREFECT_UI_URL, else the API's host (its UI)."""
    current = get_current_settings()
    base = current.ui_url or str(current.api.url or "").rstrip("/").removesuffix("/api")
    return f"{base.rstrip('/')}/runs/flow-run/{run_id}"


@flow(name="qa-review", log_prints=True)
def qa_review(
    sample: str | None = None,
    overrides: dict[str, Any] | None = None,
    reviewer: str | None = None,
) -> dict[str, Any]:
    """Pause with a form per batch of pending pairs until every pair was shown once; the
    forms' name is `reviewer`'s when given.

    A form left unanswered for `qa.review_timeout_s` ends the flow; its pairs stay pending.
    """
    settings = run_settings(overrides)
    run_id = flow_run.get_id() or str(uuid.uuid4())
    shown: set[str] = set()
    totals: dict[str, Any] = {
        "batches": 0,
        "decisions": 0,
        "problems": [],
        "unchanged": [],
        "timed_out": False,
    }
    while True:
        with open_warehouse(settings) as wh:
            waiting = [
                p
                for p in reviewable_pairs(wh, settings.dataset_version, sample_id=sample)
                if p.qa_id not in shown
            ]
            batch = waiting[: settings.qa.review_batch]
            if not batch:
                break
            form = review_form(batch, paper_titles(wh, batch), reviewer)
        shown |= {p.qa_id for p in batch}
        key = f"batch-{totals['batches'] + 1}"
        log.info(
            "qa-review: waiting for form %s (%s of the %s pairs pending in %s) at %s; "
            "unanswered, it times out in %s s",
            key,
            len(batch),
            len(waiting),
            settings.dataset_version,
            form_address(run_id),
            settings.qa.review_timeout_s,
        )
        answer = _wait_for(form, key, settings)
        if answer is None:
            log.info(
                "qa-review: no answer in %s s; the pairs stay pending", settings.qa.review_timeout_s
            )
            totals["timed_out"] = True
            break
        applied = record_verdicts(settings, answer.verdicts(), answer.reviewer, "ui", run_id)
        totals["batches"] += 1
        totals["decisions"] += len(applied.decisions)
        totals["problems"] += [str(p) for p in applied.problems]
        totals["unchanged"] += [str(u) for u in applied.unchanged]
        _log_batch(totals["batches"], applied)
    log.info(
        "qa-review: %s decisions recorded in %s forms, %s not recorded, %s already so",
        totals["decisions"],
        totals["batches"],
        len(totals["problems"]),
        len(totals["unchanged"]),
    )
    return totals


def _wait_for(form: type[RunInput], key: str, settings: Settings) -> Any:
    """Pause until the form `key` is answered; None when `qa.review_timeout_s` passed."""
    try:
        return pause_flow_run(
            wait_for_input=form,
            timeout=settings.qa.review_timeout_s,
            poll_interval=settings.qa.review_poll_s,
            key=key,
        )
    except FlowPauseTimeout:
        return None


# -- is the judge right? reviewers grade the judge's QA grades ---------------------------


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
    fields: dict[str, Any] = _named(GradeForm, reviewer)
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
    now = _now()
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
                    "reviewed_at": now,
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
        log.info(
            "grade-review: waiting for form %s (%s of the %s sampled judge grades in %s) at %s; "
            "unanswered, it times out in %s s",
            key,
            len(batch),
            len(items),
            settings.dataset_version,
            form_address(run_id),
            settings.qa.review_timeout_s,
        )
        answer = _wait_for(grade_form(batch, reviewer), key, settings)
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


def paper_titles(wh: Warehouse, pairs: list[QAPair]) -> dict[str, str]:
    """Titles of the papers the pairs' evidence quotes."""
    return reviews.titles_of(wh, sorted({e["paper_id"] for p in pairs for e in p.evidence}))


def _log_batch(batch: int, applied: Applied) -> None:
    """Every verdict of the form in the run's logs and in the batch's artifact: recorded,
    already so, or not recorded and why."""
    for d in applied.decisions:
        log.info("qa-review: %s %s (sample %s) by %s", d.action, d.qa_id, d.sample_id, d.reviewer)
    for line in applied.unchanged:
        log.info("qa-review: %s", line)
    for problem in applied.problems:
        log.warning("qa-review: not recorded: %s", problem)
    log.info(
        "qa-review: batch %s: %s decisions recorded, %s not recorded, %s already so",
        batch,
        len(applied.decisions),
        len(applied.problems),
        len(applied.unchanged),
    )
    rows = [
        {
            "qa_id": d.qa_id,
            "sample": d.sample_id,
            "decision": d.action,
            "outcome": "recorded",
            "reviewer": d.reviewer,
            "question": d.question,
            "answer": d.answer,
            "reason": d.reason,
        }
        for d in applied.decisions
    ]
    blank = dict.fromkeys(("sample", "decision", "reviewer", "question", "answer"), "")
    rows += [
        {"qa_id": n.qa_id, **blank, "outcome": f"not recorded ({n.reason})", "reason": n.message}
        for n in [*applied.problems, *applied.unchanged]
    ]
    publish(
        Artifact(
            f"qa-review-batch-{batch}",
            f"QA review, batch {batch}: every decision of the form and what became of it",
            table=rows,
        ),
        own_run=True,
    )
