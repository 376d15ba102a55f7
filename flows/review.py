"""Human review of QA pairs (DESIGN §6): the Prefect UI form, and the one writer of decisions
that the UI, the CLI and JSONL imports share.

The review flow pauses with a `RunInput` form per batch of pending pairs; it holds no
warehouse connection while it waits, so a nightly run is never blocked by a reviewer.
"""

from __future__ import annotations

import json
import uuid
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, ClassVar

from prefect import flow
from prefect.artifacts import create_table_artifact
from prefect.exceptions import FlowPauseTimeout
from prefect.flow_runs import pause_flow_run
from prefect.input import RunInput
from prefect.logging import get_run_logger
from prefect.runtime import flow_run
from pydantic import Field, create_model

from flows._load import load_qa
from flows._stage import open_warehouse
from tasks.config import Settings, load_settings
from tasks.qa.review import QADecision, Verdict, apply_verdicts, pair_decision_model
from tasks.records import QAPair, Quarantine
from warehouse import Warehouse

__all__ = [
    "ReviewForm",
    "load_decisions",
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

    def verdicts(self) -> list[Verdict]:
        """One verdict per pair, in the form's order."""
        return [getattr(self, _field(n)).verdict(qa_id) for n, qa_id in enumerate(self.qa_ids, 1)]


def _field(n: int) -> str:
    return f"pair_{n:02d}"


def review_form(pairs: list[QAPair], titles: dict[str, str]) -> type[ReviewForm]:
    """The form of one batch: a required decision per pair, its question, answer and
    evidence (with each paper's title) beside it, the text prefilled for edits."""
    fields: dict[str, Any] = {}
    for n, pair in enumerate(pairs, 1):
        model, field = pair_decision_model(n, len(pairs), pair, titles)
        fields[_field(n)] = (model, Field(**field))
    form = create_model("ReviewForm", __base__=ReviewForm, **fields)
    form.qa_ids = tuple(p.qa_id for p in pairs)
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
        return int(
            wh.scalar(
                "SELECT count(*) FROM fct_qa_pairs q JOIN dim_samples s USING (sample_id) "
                "WHERE s.dataset_version = ? AND q.status = 'pending'",
                [dataset_version],
            )
        )


def load_decisions(wh: Warehouse, dataset_version: str) -> list[QADecision]:
    return [
        QADecision(**{**r, "evidence": tuple(json.loads(r["evidence"] or "[]"))})
        for r in wh.rows(
            "SELECT d.* EXCLUDE (run_id) FROM fct_qa_decisions d JOIN dim_samples s "
            "USING (sample_id) WHERE s.dataset_version = ? ORDER BY d.decided_at, d.decision_id",
            [dataset_version],
        )
    ]


def record_verdicts(
    settings: Settings,
    verdicts: list[Verdict],
    reviewer: str,
    channel: str,
    run_id: str | None = None,
) -> tuple[list[QADecision], list[str]]:
    """Apply verdicts and write the decisions, the pairs' new state and any problems in one
    transaction. Problems are quarantined (stage `review`) and returned."""
    run_id = run_id or f"{channel}-review-{uuid.uuid4()}"
    at = datetime.now(UTC).replace(tzinfo=None)
    with open_warehouse(settings) as wh:
        pairs = {p.qa_id: p for ps in load_qa(wh, settings.dataset_version).values() for p in ps}
        changed, decisions, problems = apply_verdicts(verdicts, pairs, reviewer, channel, at)
        extra = {"run_id": run_id}
        quarantine = [
            Quarantine(p.split(":", 1)[0], "review", "review_input_rejected", p) for p in problems
        ]
        with wh.transaction():
            wh.upsert("fct_qa_decisions", decisions, ("decision_id",), extra=extra)
            wh.upsert("fct_qa_pairs", changed, ("qa_id",), update=True, extra=extra)
            wh.upsert("quarantine", quarantine, ("item_id", "stage"), update=True, extra=extra)
    return decisions, problems


@flow(name="qa-review", log_prints=True)
def qa_review(
    sample: str | None = None,
    overrides: dict[str, Any] | None = None,
    config_path: str | None = None,
) -> dict[str, Any]:
    """Pause with a form per batch of pending pairs until every pair was shown once.

    A form left unanswered for `qa.review_timeout_s` ends the flow; its pairs stay pending.
    """
    settings = load_settings(Path(config_path) if config_path else None, overrides)
    run_id = flow_run.get_id() or str(uuid.uuid4())
    shown: set[str] = set()
    totals = {"batches": 0, "decisions": 0, "problems": [], "timed_out": False}
    while True:
        with open_warehouse(settings) as wh:
            batch = [
                p
                for p in reviewable_pairs(wh, settings.dataset_version, sample_id=sample)
                if p.qa_id not in shown
            ][: settings.qa.review_batch]
            if not batch:
                break
            form = review_form(batch, _titles(wh, batch))
        shown |= {p.qa_id for p in batch}
        try:
            answer = pause_flow_run(
                wait_for_input=form,
                timeout=settings.qa.review_timeout_s,
                poll_interval=settings.qa.review_poll_s,
                key=f"batch-{totals['batches'] + 1}",
            )
        except FlowPauseTimeout:
            get_run_logger().info(
                "qa-review: no answer in %s s; the pairs stay pending", settings.qa.review_timeout_s
            )
            totals["timed_out"] = True
            break
        decisions, problems = record_verdicts(
            settings, answer.verdicts(), answer.reviewer, "ui", run_id
        )
        totals["batches"] += 1
        totals["decisions"] += len(decisions)
        totals["problems"] += problems
        _log_batch(totals["batches"], decisions, problems)
    return totals


def _titles(wh: Warehouse, pairs: list[QAPair]) -> dict[str, str]:
    """Titles of the papers the pairs' evidence quotes."""
    ids = sorted({e["paper_id"] for p in pairs for e in p.evidence})
    rows = wh.rows("SELECT paper_id, title FROM dim_papers WHERE list_contains(?, paper_id)", [ids])
    return {r["paper_id"]: r["title"] or "" for r in rows}


def _log_batch(batch: int, decisions: list[QADecision], problems: list[str]) -> None:
    """Each decision in the run's logs (the run logger: they are what the run did, shown
    in the UI whatever other loggers are set up), and the batch's decisions as an artifact."""
    log = get_run_logger()
    for d in decisions:
        log.info("qa-review: %s %s (sample %s) by %s", d.action, d.qa_id, d.sample_id, d.reviewer)
    for problem in problems:
        log.warning("qa-review: not recorded: %s", problem)
    log.info(
        "qa-review: batch %s: %s decisions recorded, %s not", batch, len(decisions), len(problems)
    )
    rejected = [
        {"qa_id": p.split(":", 1)[0], "decision": "not recorded", "reason": p} for p in problems
    ]
    create_table_artifact(
        [
            {
                "qa_id": d.qa_id,
                "sample": d.sample_id,
                "decision": d.action,
                "reviewer": d.reviewer,
                "question": d.question,
                "answer": d.answer,
                "reason": d.reason,
            }
            for d in decisions
        ]
        + rejected,
        key=f"qa-review-batch-{batch}",
        description=f"QA review, batch {batch}: the decisions recorded",
    )
