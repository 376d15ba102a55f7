"""Human review of QA pairs (docs/design.md §6): one decision record whichever way it was made.

The Prefect UI form, the CLI and JSONL files all produce `Verdict`s; `apply_verdicts` turns
them into the pairs' new state and `QADecision` rows that keep the reviewer, the time, the
text as reviewed and, for an edit, the text before it. Every verdict is accounted for:
recorded, already so (nothing new to record), or not recorded with the reason, and a verdict
that contradicts a decision made after its reviewer was shown the pair is a conflict that
names that decision (who, how, when) and is not applied.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from typing import Any, Final, Literal, NamedTuple

from pydantic import BaseModel, ConfigDict, Field, create_model

from lilo.tasks.errors import InputError
from lilo.tasks.printable import printable
from lilo.tasks.records import QADecision, QAPair, content_id

__all__ = [
    "QA_STATUSES",
    "REVIEWABLE",
    "Applied",
    "FileVerdict",
    "PairDecision",
    "NotRecorded",
    "ReviewError",
    "Verdict",
    "apply_verdicts",
    "approval",
    "auto_decisions",
    "decide",
    "export_record",
    "pair_context",
    "pair_decision_model",
    "reviewer_problem",
]

# A human may decide (or change their mind on) these; filtered, duplicate and invalid pairs
# never reached review.
REVIEWABLE = ("pending", "approved", "rejected")
QA_STATUSES = (*REVIEWABLE, "filtered", "duplicate", "invalid")

Action = Literal["approve", "reject", "edit"]
KEEP: Final = "keep as is"  # the form's default decision: the pair stays as it is (pending)
FormAction = Literal["keep as is", "approve", "reject", "edit"]


class ReviewError(InputError):
    """A decision that cannot be recorded; the message says what to change."""


class Verdict(BaseModel):
    """One pair's verdict as a reviewer gives it; `pending` leaves the pair for later.

    `question`/`answer` carry the text as the reviewer left it: a change makes an approval
    an edit. `shown_at` (naive UTC, or with an offset) is when the reviewer was shown the
    pair: a decision recorded on it since then conflicts. The CLI and JSONL files give
    these; the UI form's entries become these.
    """

    model_config = ConfigDict(extra="forbid")

    qa_id: str
    decision: Literal["pending", "approve", "reject", "edit"] = "pending"
    question: str | None = None
    answer: str | None = None
    reason: str = ""
    shown_at: datetime | None = None

    def same_as(self, other: Verdict) -> bool:
        return (self.decision, self.question, self.answer, self.reason) == (
            other.decision,
            other.question,
            other.answer,
            other.reason,
        )


def _text_required(schema: dict[str, Any]) -> None:
    """The form marks the prefilled question and answer required (a UI labels a field
    with a default "Optional", and neither may be emptied); the model keeps the defaults."""
    schema["required"] = ["question", "answer"]


class PairDecision(BaseModel):
    """One pair's entry in the review form: the decision is "keep as is" (the pair stays
    pending) until chosen, so a batch needs only the choices made; the question and answer
    come prefilled, and changing them makes the approval an edit."""

    model_config = ConfigDict(extra="forbid", json_schema_extra=_text_required)

    decision: FormAction = KEEP
    question: str
    answer: str
    reason: str = ""

    def verdict(self, qa_id: str, shown_at: datetime | None = None) -> Verdict:
        return Verdict(
            qa_id=qa_id,
            decision="pending" if self.decision == KEEP else self.decision,
            question=self.question,
            answer=self.answer,
            reason=self.reason,
            shown_at=shown_at,
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
            FormAction,
            Field(
                default=KEEP,
                title=f"Decision on pair {n}",  # shows "keep as is" until chosen
                description=pair_context(pair, titles),
            ),
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
        reason=(
            str,
            Field(default="", title="Reason", description="Required when you reject the pair."),
        ),
    )
    return model, {
        "title": f"Pair {n} of {total} · {kind} · sample {pair.sample_id} · QA {pair.qa_id}"
    }


class FileVerdict(Verdict):
    """A JSONL line (`lilo review export`/`import`): a verdict plus the context it was shown
    with. A line's own `reviewer` and `decided_at` are read but never recorded: a decision is
    the importer's (`--reviewer`), made when imported."""

    sample_id: str = ""
    kind: str = ""
    status: str = ""
    paper_ids: list[str] = []
    evidence: list[dict[str, str | int]] = []  # an imported pair names papers by position
    reviewer: str | None = None
    decided_at: datetime | None = None


def reviewer_problem(reviewer: str) -> str:
    """Why a reviewer's name is refused: it holds a line break or a control character, which
    would print a line of its own wherever the decision is shown."""
    shown = printable(reviewer, one_line=True)
    return f"reviewer name {shown!r} holds control characters: give a name of plain characters"


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
    if printable(reviewer, one_line=True) != reviewer:
        raise ReviewError(reviewer_problem(reviewer))
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


def approval(pair: QAPair, reviewer: str, channel: str, reason: str, at: datetime) -> QADecision:
    """The record of a pair approved as it stands; its id leaves out the time, so recording
    the same approval again adds nothing."""
    return QADecision(
        decision_id=content_id(pair.qa_id, "approve", reviewer),
        qa_id=pair.qa_id,
        sample_id=pair.sample_id,
        action="approve",
        reviewer=reviewer,
        channel=channel,
        decided_at=at,
        question=pair.question,
        answer=pair.answer,
        evidence=pair.evidence,
        original_question=pair.question,
        original_answer=pair.answer,
        reason=reason,
    )


def auto_decisions(pairs: list[QAPair], at: datetime) -> list[QADecision]:
    """The records of auto-review mode's approvals (docs/design.md §6: recorded as such)."""
    return [
        approval(p, "auto", "auto", p.reason, at)
        for p in pairs
        if p.status == "approved" and p.reviewer == "auto"
    ]


@dataclass(frozen=True)
class NotRecorded:
    """A verdict not recorded, and why: `reason` is `review_input_rejected` (it cannot be
    applied), `review_conflict` (it contradicts another verdict or a later decision) or
    `unchanged` (the pair is already so)."""

    qa_id: str
    reason: str
    message: str

    def __str__(self) -> str:
        return f"{self.qa_id}: {self.message}"


class Applied(NamedTuple):
    """What became of a submission's verdicts: each one is in exactly one list (pending ones
    and exact repeats within the submission aside)."""

    changed: list[QAPair]
    decisions: list[QADecision]
    problems: list[NotRecorded]  # rejected inputs and conflicts
    unchanged: list[NotRecorded]


def apply_verdicts(
    verdicts: list[Verdict],
    pairs: dict[str, QAPair],
    reviewer: str,
    channel: str,
    at: datetime,
    latest: dict[str, QADecision] | None = None,
) -> Applied:
    """Apply a submission's verdicts by `reviewer` at `at`. `latest` holds each pair's last
    recorded decision. A verdict that cannot be applied, different verdicts on one pair in
    the submission (none of them is applied), and a verdict that differs from a decision
    recorded after its `shown_at` (or, with no `shown_at`, from another person's decision)
    are problems, never crashes; one that leaves the pair as it is records nothing and is
    reported as unchanged, naming the decision that made it so."""
    latest = latest or {}
    by_pair: dict[str, list[Verdict]] = defaultdict(list)
    for verdict in verdicts:
        if verdict.decision != "pending":
            by_pair[verdict.qa_id].append(verdict)
    changed: dict[str, QAPair] = {}
    decisions: list[QADecision] = []
    problems: list[NotRecorded] = []
    unchanged: list[NotRecorded] = []
    for qa_id, given in by_pair.items():
        if any(not v.same_as(given[0]) for v in given[1:]):
            kinds = ", ".join(v.decision for v in given)
            problems.append(
                NotRecorded(
                    qa_id,
                    "review_conflict",
                    f"{len(given)} different verdicts on this pair ({kinds}): none recorded",
                )
            )
            continue
        verdict = given[0]
        pair = pairs.get(qa_id)
        if pair is None:
            problems.append(
                NotRecorded(qa_id, "review_input_rejected", "no such QA pair in this dataset")
            )
            continue
        try:
            updated, record = decide(
                pair,
                verdict.decision,
                reviewer,
                channel,
                at,
                reason=verdict.reason,
                question=verdict.question,
                answer=verdict.answer,
            )
        except ReviewError as exc:
            problems.append(NotRecorded(qa_id, "review_input_rejected", str(exc)))
            continue
        last = latest.get(qa_id)
        same = (updated.status, updated.question, updated.answer) == (
            pair.status,
            pair.question,
            pair.answer,
        )
        if same:
            done = f"already {pair.status}" + (f" ({_made(last)})" if last else "")
            unchanged.append(NotRecorded(qa_id, "unchanged", f"{done}: nothing new recorded"))
            continue
        shown = _naive_utc(verdict.shown_at) if verdict.shown_at else None
        if last and shown and last.decided_at > shown:
            problems.append(
                NotRecorded(
                    qa_id,
                    "review_conflict",
                    f"your {record.action} conflicts with the {_made(last)}, made after the "
                    f"pair was shown to you at {shown:%Y-%m-%d %H:%M:%S} UTC: not recorded; "
                    "it stays " + pair.status,
                )
            )
            continue
        if last and not shown and last.reviewer != record.reviewer and _by_a_person(last):
            problems.append(
                NotRecorded(
                    qa_id,
                    "review_conflict",
                    f"your {record.action} conflicts with the {_made(last)}: not recorded; it "
                    f"stays {pair.status} (--replace records yours over it)",
                )
            )
            continue
        changed[qa_id] = updated
        decisions.append(record)
    return Applied(list(changed.values()), decisions, problems, unchanged)


def _by_a_person(decision: QADecision) -> bool:
    """Whether a person made the decision: auto-review's and a benchmark import's
    approvals are no one's to conflict with."""
    return decision.channel != "auto" and not decision.reviewer.startswith("import:")


def _made(decision: QADecision) -> str:
    """A decision as a reviewer reads it: what, who, how, when."""
    return (
        f"{decision.action} by {decision.reviewer} ({decision.channel}) at "
        f"{decision.decided_at:%Y-%m-%d %H:%M:%S} UTC"
    )


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
        evidence=[dict(e) for e in pair.evidence],
        question=pair.question,
        answer=pair.answer,
        shown_at=datetime.now(UTC).replace(tzinfo=None),
    ).model_dump(mode="json", exclude={"reviewer", "decided_at"})
