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
from typing import Any

from prefect import flow
from prefect.exceptions import FlowPauseTimeout
from prefect.flow_runs import pause_flow_run
from prefect.input import RunInput
from prefect.runtime import flow_run

from flows._load import load_qa
from flows._stage import log, open_warehouse
from tasks.config import Settings, load_settings
from tasks.qa.review import QADecision, Verdict, apply_verdicts
from tasks.records import QAPair, Quarantine
from warehouse import Warehouse

__all__ = [
    "ReviewForm",
    "load_decisions",
    "pending_count",
    "qa_review",
    "record_verdicts",
    "reviewable_pairs",
]


class ReviewForm(RunInput):
    """The Prefect UI form: who reviews, and a verdict per pair (prefilled as pending)."""

    reviewer: str
    verdicts: list[Verdict]


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


def _describe(pairs: list[QAPair]) -> str:
    """The form's description: each pair with its evidence, as the reviewer should see it."""
    parts = [
        f"# Review {len(pairs)} QA pairs\n\nFor each row set `decision` to approve, reject "
        "(with a `reason`) or edit (change `question`/`answer`); pending leaves it for later."
    ]
    for i, p in enumerate(pairs, 1):
        quotes = "\n".join(f"> [{e['paper_id']}] {e['quote']}" for e in p.evidence)
        parts.append(
            f"## {i}. {p.kind} · sample {p.sample_id} · `{p.qa_id}`\n\n"
            f"**Q:** {p.question}\n\n**A:** {p.answer}\n\n{quotes}"
        )
    return "\n\n".join(parts)


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
        shown |= {p.qa_id for p in batch}
        form = ReviewForm.with_initial_data(
            description=_describe(batch),
            reviewer="",
            verdicts=[Verdict(qa_id=p.qa_id, question=p.question, answer=p.answer) for p in batch],
        )
        try:
            answer = pause_flow_run(
                wait_for_input=form,
                timeout=settings.qa.review_timeout_s,
                poll_interval=settings.qa.review_poll_s,
                key=f"batch-{totals['batches'] + 1}",
            )
        except FlowPauseTimeout:
            log.info(
                "qa-review: no answer in %s s; the pairs stay pending", settings.qa.review_timeout_s
            )
            totals["timed_out"] = True
            break
        decisions, problems = record_verdicts(
            settings, answer.verdicts, answer.reviewer, "ui", run_id
        )
        totals["batches"] += 1
        totals["decisions"] += len(decisions)
        totals["problems"] += problems
        log.info(
            "qa-review: batch %s: %s decisions, %s problems",
            totals["batches"],
            len(decisions),
            len(problems),
        )
    return totals
