"""QA generation for one sample (docs/design.md §6): generate, check, filter, deduplicate, approve,
and go round again for the kinds still short of their quota.

Statuses: `invalid` (unusable reply or evidence that fails the checks), `filtered` (the
LLM filter said no), `duplicate` (near-repeat of an earlier question), then `approved`
with reviewer "auto" in auto-review mode, or `pending` for a human in manual mode.
"""

from __future__ import annotations

import math
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, replace
from functools import partial
from typing import Any

from lilo.tasks.config import JudgeSettings, QASettings
from lilo.tasks.embeddings import Embedder
from lilo.tasks.llm import LLMClient, LLMError
from lilo.tasks.qa.checks import (
    cross_problem,
    evidence_problem,
    filter_pair,
    near_duplicates,
    normalise_whitespace,
)
from lilo.tasks.qa.parse import QA_SCHEMA, ask_json, parse_qa_items
from lilo.tasks.qa.prompts import PROMPT_VERSION, generate_messages
from lilo.tasks.records import PaperText, QAPair, Sample, content_id

__all__ = ["PROMPT_VERSION", "QAResult", "generate_qa", "is_ready", "waiting_for_review"]

# Pairs that hold (or may still earn) a place in the quota; `rejected` ones still count
# as questions a new one must not repeat.
_LIVE = ("approved", "pending")
_SEEN = ("approved", "pending", "rejected")


@dataclass(frozen=True)
class QAResult:
    """`pairs`: the records this call created (existing ones are left as they are).

    `stuck`: the rounds are used up and approved plus pending pairs still fall short, so
    no review can make the sample ready (docs/design.md §6: marked so, with why).
    `llm_error`: an LLM call failed; the sample gets no pairs this time and, not being
    ready, is retried on the next run (its finished calls are cached)."""

    pairs: list[QAPair]
    ready: bool
    why_not: str
    stuck: bool = False
    llm_error: str = ""


@dataclass(frozen=True)
class _Job:
    kind: str
    papers: list[PaperText]  # as shown in the prompt, numbered from 1


def generate_qa(
    sample: Sample,
    papers: list[PaperText],
    qa: QASettings,
    judge: JudgeSettings,
    llm: LLMClient,
    embedder: Embedder,
    existing: list[QAPair] | None = None,
) -> QAResult:
    """Rounds until both quotas are met by live pairs or `qa.max_rounds` rounds exist; the
    filter asks at the judge's temperature, `llm.concurrency` calls at a time.

    The round cap counts the sample's whole history (`existing` included), so a sample
    whose pairs keep failing costs a bounded number of calls. In manual mode pending
    pairs stop regeneration (they may be approved) but only approved ones make it ready.
    """
    if [p.paper_id for p in papers] != list(sample.paper_ids):
        raise ValueError(f"papers must be given in sample order {sample.paper_ids}")
    pairs = list(existing or [])
    created: list[QAPair] = []
    round_no = max((p.round for p in pairs), default=0)
    while (jobs := _jobs(pairs, papers, qa)) and round_no < qa.max_rounds:
        round_no += 1
        try:
            fresh = _round(sample, jobs, pairs, round_no, qa, judge, llm, embedder)
        except LLMError as exc:
            return QAResult([], False, f"LLM call failed: {exc}", llm_error=str(exc))
        pairs += fresh
        created += fresh
    ready, why_not = _readiness(pairs, qa, round_no)
    return QAResult(created, ready, why_not, stuck=bool(jobs) and not ready)


def _jobs(pairs: list[QAPair], papers: list[PaperText], qa: QASettings) -> list[_Job]:
    """Prompts still needed: singles for papers below their share, cross if short."""
    live = [p for p in pairs if p.status in _LIVE]
    jobs = []
    if sum(p.kind == "single" for p in live) < qa.quota_single:
        share = math.ceil(qa.quota_single / len(papers))
        for paper in papers:
            have = sum(p.kind == "single" and p.paper_ids == (paper.paper_id,) for p in live)
            if have < share:
                jobs.append(_Job("single", [paper]))
    if sum(p.kind == "cross" for p in live) < qa.quota_cross:
        jobs.append(_Job("cross", papers))
    return jobs


def _round(
    sample: Sample,
    jobs: list[_Job],
    pairs: list[QAPair],
    round_no: int,
    qa: QASettings,
    judge: JudgeSettings,
    llm: LLMClient,
    embedder: Embedder,
) -> list[QAPair]:
    with ThreadPoolExecutor(llm.concurrency) as pool:
        drafts = [
            p
            for batch in pool.map(partial(_ask, sample, pairs, round_no, qa, llm), jobs)
            for p in batch
        ]
        known = {p.qa_id for p in pairs}
        drafts = [d for d in drafts if d.qa_id not in known]  # an exact repeat is no new record
        texts = {p.paper_id: p.text for job in jobs for p in job.papers}
        checked = list(pool.map(partial(_check, texts=texts, qa=qa, judge=judge, llm=llm), drafts))
    survivors = [p for p in checked if p.status == "candidate"]
    seen = [p.question for p in pairs if p.status in _SEEN]
    repeats = near_duplicates(seen, [p.question for p in survivors], embedder, qa.dedup_cosine)
    final = {p.qa_id: p for p in checked}
    auto = qa.review == "auto"
    for pair, repeat in zip(survivors, repeats, strict=True):
        if repeat:
            final[pair.qa_id] = _with(pair, "duplicate", f"near-duplicate of: {repeat}")
        elif auto:
            final[pair.qa_id] = _with(pair, "approved", "auto-approved", reviewer="auto")
        else:
            final[pair.qa_id] = _with(pair, "pending", "awaiting human review")
    return list(final.values())


def _ask(
    sample: Sample,
    pairs: list[QAPair],
    round_no: int,
    qa: QASettings,
    llm: LLMClient,
    job: _Job,
) -> list[QAPair]:
    """One generation call (plus its retry) turned into draft pairs, or one invalid record."""
    ids = tuple(p.paper_id for p in job.papers)
    existing = [
        p.question
        for p in pairs
        if p.kind == job.kind and p.question and (job.kind == "cross" or p.paper_ids == ids)
    ]
    n = qa.single_per_paper if job.kind == "single" else qa.cross_per_sample
    messages = generate_messages(job.kind, n, sample.topic, [p.text for p in job.papers], existing)
    items, reply, error = ask_json(
        llm,
        messages,
        partial(parse_qa_items, n_papers=len(ids)),
        purpose=f"qa_{job.kind}",
        max_tokens=qa.generate_max_tokens,
        response_format=QA_SCHEMA,
    )
    base: dict[str, Any] = {
        "sample_id": sample.sample_id,
        "kind": job.kind,
        "round": round_no,
        "reviewer": "",
        "prompt_version": PROMPT_VERSION,
        "backbone": llm.backbone,
    }
    if items is None:
        return [
            QAPair(
                qa_id=content_id(sample.sample_id, job.kind, round_no, reply),
                paper_ids=ids,
                question="",
                answer="",
                evidence=(),
                status="invalid",
                reason=f"unusable reply after a retry: {error}; raw output: {reply}",
                **base,
            )
        ]
    drafts = []
    for item in items:
        evidence = tuple(
            {"paper_id": ids[e["paper"] - 1], "quote": e["quote"]} for e in item["evidence"]
        )
        used = {e["paper_id"] for e in evidence}
        drafts.append(
            QAPair(
                qa_id=content_id(sample.sample_id, job.kind, item["question"], item["answer"]),
                paper_ids=tuple(i for i in ids if i in used),
                question=item["question"],
                answer=item["answer"],
                evidence=evidence,
                status="candidate",
                reason="",
                **base,
            )
        )
    return drafts


def _check(
    pair: QAPair, texts: dict[str, str], qa: QASettings, judge: JudgeSettings, llm: LLMClient
) -> QAPair:
    """Evidence and cross checks first (free), then the LLM filter; `candidate` survives.
    A failed attempt (already `invalid`) is kept as it is, raw output included."""
    if pair.status != "candidate":
        return pair
    normalised = {pid: normalise_whitespace(texts[pid]) for pid in pair.paper_ids}
    problem = evidence_problem(list(pair.evidence), normalised)
    if not problem and pair.kind == "cross":
        problem = cross_problem(pair.paper_ids)
    if problem:
        return _with(pair, "invalid", problem)
    keep, reason = filter_pair(
        pair.question, pair.answer, [texts[pid] for pid in pair.paper_ids], qa, judge, llm
    )
    return pair if keep else _with(pair, "filtered", reason)


def _with(pair: QAPair, status: str, reason: str, reviewer: str = "") -> QAPair:
    return replace(pair, status=status, reason=reason, reviewer=reviewer)


def is_ready(pairs: list[QAPair], qa: QASettings) -> bool:
    """A sample is ready when both quotas are met by approved pairs."""
    return _readiness(pairs, qa, 0)[0]


def waiting_for_review(pairs: list[QAPair], qa: QASettings) -> str:
    """Why a sample that is not ready waits for a reviewer: "waiting for review: ..." with
    its quotas' state; "" when it is ready or none of its pairs is pending review."""
    short = _shortfall(pairs, qa)
    if not short or not any(p.status == "pending" for p in pairs):
        return ""
    return f"waiting for review: {'; '.join(short)}"


def _readiness(pairs: list[QAPair], qa: QASettings, round_no: int) -> tuple[bool, str]:
    short = _shortfall(pairs, qa)
    if not short:
        return True, ""
    return False, f"{'; '.join(short)} (round {round_no} of {qa.max_rounds})"


def _shortfall(pairs: list[QAPair], qa: QASettings) -> list[str]:
    """Each quota approved pairs do not meet yet, with its counts."""
    counts = {
        kind: (
            sum(p.kind == kind and p.status == "approved" for p in pairs),
            sum(p.kind == kind and p.status == "pending" for p in pairs),
        )
        for kind in ("single", "cross")
    }
    quota = {"single": qa.quota_single, "cross": qa.quota_cross}
    return [
        f"{kind}: {approved}/{quota[kind]} approved, {pending} pending review"
        for kind, (approved, pending) in counts.items()
        if approved < quota[kind]
    ]
