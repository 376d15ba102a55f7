"""Human review of QA pairs (DESIGN §6): one decision record whichever way it was made.

The Prefect UI form, the CLI and JSONL files all produce `Verdict`s; `apply_verdicts` turns
them into the pairs' new state and `QADecision` rows that keep the reviewer, the time, the
text as reviewed and, for an edit, the text before it.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import UTC, datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, create_model

from tasks.records import QAPair, content_id

__all__ = [
    "REVIEWABLE",
    "FileVerdict",
    "PairDecision",
    "QADecision",
    "ReviewError",
    "Verdict",
    "apply_verdicts",
    "auto_decisions",
    "decide",
    "export_record",
    "pair_context",
    "pair_decision_model",
]

# A human may decide (or change their mind on) these; filtered, duplicate and invalid pairs
# never reached review.
REVIEWABLE = ("pending", "approved", "rejected")

Action = Literal["approve", "reject", "edit"]


class ReviewError(ValueError):
    """A decision that cannot be recorded; the message says what to change."""


@dataclass(frozen=True)
class QADecision:
    decision_id: str
    qa_id: str
    sample_id: str
    action: str  # approve | reject | edit
    reviewer: str
    channel: str  # auto | ui | cli | file
    decided_at: datetime
    question: str
    answer: str
    evidence: tuple[dict[str, str], ...]
    original_question: str
    original_answer: str
    reason: str


class Verdict(BaseModel):
    """One pair's verdict as a reviewer gives it; `pending` leaves the pair for later.

    `question`/`answer` carry the text as the reviewer left it: a change makes an approval
    an edit. The CLI and JSONL files give these; the UI form's entries become these.
    """

    model_config = ConfigDict(extra="forbid")

    qa_id: str
    decision: Literal["pending", "approve", "reject", "edit"] = "pending"
    question: str | None = None
    answer: str | None = None
    reason: str = ""


def _text_required(schema: dict[str, Any]) -> None:
    """The form marks the prefilled question and answer required (a UI labels a field
    with a default "Optional", and neither may be emptied); the model keeps the defaults."""
    schema["required"] = ["decision", "question", "answer"]


class PairDecision(BaseModel):
    """One pair's entry in the review form: a decision is required; the question and
    answer come prefilled, and changing them makes the approval an edit."""

    model_config = ConfigDict(extra="forbid", json_schema_extra=_text_required)

    decision: Action
    question: str
    answer: str
    reason: str = ""

    def verdict(self, qa_id: str) -> Verdict:
        return Verdict(
            qa_id=qa_id,
            decision=self.decision,
            question=self.question,
            answer=self.answer,
            reason=self.reason,
        )


def pair_context(pair: QAPair, titles: dict[str, str]) -> str:
    """What a reviewer reads before deciding: the question, the answer and each evidence
    quote under its paper's title. Paragraphs only, no Markdown marks: one UI renders
    descriptions as Markdown, the other as plain text."""
    parts = [f"QUESTION: {pair.question}", f"ANSWER: {pair.answer}"]
    for i, e in enumerate(pair.evidence, 1):
        title = titles.get(e["paper_id"]) or "untitled"
        parts.append(f'EVIDENCE {i} from "{title}" ({e["paper_id"]}): “{e["quote"]}”')
    return "\n\n".join(parts)


def pair_decision_model(
    n: int, total: int, pair: QAPair, titles: dict[str, str]
) -> tuple[type[PairDecision], dict[str, Any]]:
    """The form entry of the `n`th of `total` pairs: a PairDecision subclass whose
    decision carries the pair's context, and the keyword arguments of its form field
    (title, description). The pair's ids are in the title: shown, never editable."""
    kind = "single-paper" if pair.kind == "single" else "cross-paper"
    model = create_model(
        f"Pair{n:02d}",
        __base__=PairDecision,
        decision=(
            Action,
            Field(title=f"Decision on pair {n}", description=pair_context(pair, titles)),
        ),
        question=(
            str,
            Field(
                default=pair.question,
                min_length=1,
                title="Question (change it to edit)",
            ),
        ),
        answer=(
            str,
            Field(
                default=pair.answer,
                min_length=1,
                title="Answer (change it to edit)",
            ),
        ),
        reason=(str, Field(default="", title="Reason (required to reject)")),
    )
    return model, {
        "title": f"Pair {n} of {total} · {kind} · sample {pair.sample_id} · QA {pair.qa_id}"
    }


class FileVerdict(Verdict):
    """A JSONL line (`lilo review export`/`import`): a verdict plus the context it was shown
    with, and optionally its own reviewer and time."""

    sample_id: str = ""
    kind: str = ""
    status: str = ""
    paper_ids: list[str] = []
    evidence: list[dict[str, str]] = []
    reviewer: str | None = None
    decided_at: datetime | None = None


def decide(
    pair: QAPair,
    action: str,
    reviewer: str,
    channel: str,
    at: datetime,
    *,
    reason: str = "",
    question: str | None = None,
    answer: str | None = None,
) -> tuple[QAPair, QADecision]:
    """The pair after `action`, and the decision's record. An approval whose text differs
    from the pair's is an edit; an edit approves the edited text."""
    if pair.status not in REVIEWABLE:
        raise ReviewError(
            f"pair {pair.qa_id} is {pair.status} ({pair.reason}); only {', '.join(REVIEWABLE)} "
            "pairs can be reviewed"
        )
    if not reviewer.strip():
        raise ReviewError("no reviewer named: give --reviewer NAME (or a 'reviewer' field)")
    new_q = (question if question is not None else pair.question).strip()
    new_a = (answer if answer is not None else pair.answer).strip()
    changed = (new_q, new_a) != (pair.question, pair.answer)
    if action == "reject":
        if not reason.strip():
            raise ReviewError(f"rejecting {pair.qa_id} needs a reason")
        new_q, new_a = pair.question, pair.answer
    elif action in ("approve", "edit"):
        if not new_q or not new_a:
            raise ReviewError(f"an edit of {pair.qa_id} left the question or answer empty")
        if action == "edit" and not changed:
            raise ReviewError(f"edit of {pair.qa_id} changes nothing: give a new question/answer")
        action = "edit" if changed else "approve"
    else:
        raise ReviewError(f"unknown decision {action!r}: use approve, reject or edit")
    status = "rejected" if action == "reject" else "approved"
    why = reason.strip() or ("edited by reviewer" if action == "edit" else "approved by reviewer")
    record = QADecision(
        decision_id=content_id(pair.qa_id, action, reviewer, channel, at, new_q, new_a, why),
        qa_id=pair.qa_id,
        sample_id=pair.sample_id,
        action=action,
        reviewer=reviewer.strip(),
        channel=channel,
        decided_at=at,
        question=new_q,
        answer=new_a,
        evidence=pair.evidence,
        original_question=pair.question,
        original_answer=pair.answer,
        reason=why,
    )
    updated = replace(
        pair, question=new_q, answer=new_a, status=status, reviewer=record.reviewer, reason=why
    )
    return updated, record


def auto_decisions(pairs: list[QAPair], at: datetime) -> list[QADecision]:
    """The records of auto-review mode's approvals (DESIGN §6: recorded as such)."""
    return [
        QADecision(
            decision_id=content_id(p.qa_id, "approve", "auto"),
            qa_id=p.qa_id,
            sample_id=p.sample_id,
            action="approve",
            reviewer="auto",
            channel="auto",
            decided_at=at,
            question=p.question,
            answer=p.answer,
            evidence=p.evidence,
            original_question=p.question,
            original_answer=p.answer,
            reason=p.reason,
        )
        for p in pairs
        if p.status == "approved" and p.reviewer == "auto"
    ]


def apply_verdicts(
    verdicts: list[Verdict],
    pairs: dict[str, QAPair],
    reviewer: str,
    channel: str,
    at: datetime,
) -> tuple[list[QAPair], list[QADecision], list[str]]:
    """(pairs changed, decisions, problems): pending verdicts and verdicts that change
    nothing are skipped; a verdict that cannot be applied is a problem (qa id and why),
    never a crash. A FileVerdict's own reviewer and time win over the defaults."""
    changed: dict[str, QAPair] = {}
    decisions, problems = [], []
    for verdict in verdicts:
        if verdict.decision == "pending":
            continue
        pair = changed.get(verdict.qa_id) or pairs.get(verdict.qa_id)
        if pair is None:
            problems.append(f"{verdict.qa_id}: no such QA pair in this dataset version")
            continue
        who = getattr(verdict, "reviewer", None) or reviewer
        when = getattr(verdict, "decided_at", None) or at
        try:
            updated, record = decide(
                pair,
                verdict.decision,
                who,
                channel,
                _naive_utc(when),
                reason=verdict.reason,
                question=verdict.question,
                answer=verdict.answer,
            )
        except ReviewError as exc:
            problems.append(f"{verdict.qa_id}: {exc}")
            continue
        if (updated.status, updated.question, updated.answer) == (
            pair.status,
            pair.question,
            pair.answer,
        ):
            continue  # already so: a repeated import or command records nothing new
        changed[pair.qa_id] = updated
        decisions.append(record)
    return list(changed.values()), decisions, problems


def _naive_utc(at: datetime) -> datetime:
    """The warehouse keeps naive UTC timestamps; a file's time may carry any offset."""
    return at.astimezone(UTC).replace(tzinfo=None) if at.tzinfo else at


def export_record(pair: QAPair) -> dict[str, Any]:
    """A pair as a JSONL line for reviewers without access: set `decision` (approve,
    reject with a `reason`, or change `question`/`answer` to edit) and import it back."""
    return FileVerdict(
        qa_id=pair.qa_id,
        sample_id=pair.sample_id,
        kind=pair.kind,
        status=pair.status,
        paper_ids=list(pair.paper_ids),
        evidence=list(pair.evidence),
        question=pair.question,
        answer=pair.answer,
    ).model_dump(mode="json", exclude={"reviewer", "decided_at"})
