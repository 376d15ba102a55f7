"""Human review of QA pairs (docs/design.md §6): the Prefect UI form, and the one writer of
decisions that the UI, the CLI and JSONL imports share. The judge's QA grades are reviewed
the same three ways: flows/grade_review.py.

The review flow pauses with a `RunInput` form per batch of pending pairs; it holds no
warehouse connection while it waits, so a nightly run is never blocked by a reviewer. A
form's pairs may be decided elsewhere (the CLI, another form) while it is open: what the
form then says differently is reported as a conflict, in the terminal, the run's logs and
the batch's artifact, and not applied.
"""

from __future__ import annotations

import uuid
from datetime import datetime
from pathlib import Path
from typing import Any, ClassVar

from prefect import flow
from prefect.input import RunInput
from prefect.runtime import flow_run
from pydantic import Field, create_model

from lilo.flows._artifacts import publish
from lilo.flows._load import load_qa
from lilo.flows._review_forms import announce_form, named_reviewer, now, wait_for_form
from lilo.flows._stage import log, open_warehouse
from lilo.tasks.config import Settings
from lilo.tasks.config_loading import run_settings
from lilo.tasks.formatting import Artifact
from lilo.tasks.qa.review import Applied, Verdict, apply_verdicts, pair_decision_model
from lilo.tasks.records import QAPair, Quarantine
from lilo.warehouse import Warehouse
from lilo.warehouse.publishing import publish_warehouse
from lilo.warehouse.queries import reviews
from lilo.warehouse.queries.reviews import load_decisions

__all__ = [
    "ReviewForm",
    "paper_titles",
    "pending_count",
    "qa_review",
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


def review_form(
    pairs: list[QAPair], titles: dict[str, str], reviewer: str | None = None
) -> type[ReviewForm]:
    """The form of one batch: a decision per pair ("keep as is" until chosen), its
    question, answer and evidence (with each paper's title) beside it, the text prefilled
    for edits; the reviewer's name prefilled when known."""
    fields: dict[str, Any] = named_reviewer(ReviewForm, reviewer)
    for n, pair in enumerate(pairs, 1):
        model, field = pair_decision_model(n, len(pairs), pair, titles)
        fields[_field(n)] = (model, Field(**field))
    form = create_model("ReviewForm", __base__=ReviewForm, **fields)
    form.qa_ids = tuple(p.qa_id for p in pairs)
    form.shown_at = now()
    form._description = (
        f"Review {len(pairs)} QA pairs. Give your name once, then for each pair read the "
        "question, the answer and the evidence, and choose approve, reject (with a reason) "
        'or edit (change the question or answer). A pair left at "keep as is" stays '
        "pending, for a later review."
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


def record_verdicts(
    settings: Settings,
    verdicts: list[Verdict],
    reviewer: str,
    channel: str,
    run_id: str | None = None,
) -> Applied:
    """Apply verdicts against the pairs' state and last decisions now, and write the
    decisions, the pairs' new state and the problems (quarantined, stage `review`) in one
    transaction; then refresh the published copy."""
    run_id = run_id or f"{channel}-review-{uuid.uuid4()}"
    with open_warehouse(settings) as wh:
        pairs = {p.qa_id: p for ps in load_qa(wh, settings.dataset_version).values() for p in ps}
        latest = {d.qa_id: d for d in load_decisions(wh, settings.dataset_version)}
        applied = apply_verdicts(verdicts, pairs, reviewer, channel, now(), latest)
        extra = {"run_id": run_id}
        quarantine = [Quarantine(p.qa_id, "review", p.reason, p.message) for p in applied.problems]
        with wh.transaction():
            wh.upsert("fct_qa_decisions", applied.decisions, ("decision_id",), extra=extra)
            wh.upsert("fct_qa_pairs", applied.changed, ("qa_id",), update=True, extra=extra)
            wh.upsert("quarantine", quarantine, ("item_id", "stage"), update=True, extra=extra)
        # Analysts see each decision at once, not after the next run.
        publish_warehouse(wh, settings.published_path, settings.data_dir)
    return applied


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
        announce_form(
            "qa-review",
            key,
            f"{len(batch)} of the {len(waiting)} QA pairs pending in {settings.dataset_version}",
            run_id,
            "lilo review",
            settings.qa.review_timeout_s,
        )
        answer = wait_for_form(form, key, settings.qa)
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
