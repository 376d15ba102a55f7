"""QA stage: generate, check and approve QA pairs until each sample's quota is met (§6)."""

from __future__ import annotations

import re
from datetime import UTC, datetime

from prefect import flow, task
from prefect.artifacts import create_markdown_artifact
from prefect.cache_policies import NO_CACHE

from flows._load import load_papers, load_qa, load_samples
from flows._stage import StageReport, stage
from flows.review import load_decisions
from tasks.config import Settings
from tasks.embeddings import Embedder
from tasks.llm import make_client
from tasks.parallel import map_threads
from tasks.qa import QAResult, auto_decisions, generate_qa, is_ready, quality_report
from tasks.records import LLMCall, PaperText, QAPair, Quarantine, Sample
from warehouse import Warehouse

__all__ = ["qa_flow"]


@task(name="generate-qa", cache_policy=NO_CACHE)
def generate_qa_task(
    work: list[tuple[Sample, list[PaperText], list[QAPair]]], settings: Settings
) -> tuple[list[QAResult], list[LLMCall], int, int]:
    llm = make_client(settings)
    embedder = Embedder(settings)
    results = map_threads(
        lambda item: generate_qa(item[0], item[1], settings, llm, embedder, existing=item[2]),
        work,
        workers=settings.llm.concurrency,
    )
    return results, llm.take_calls(), embedder.computed, embedder.cached


@flow(name="qa", log_prints=True)
def qa_flow(settings: Settings, run_id: str) -> StageReport:
    """Bring every sample of the dataset version to its quota of approved QA pairs.

    Samples short of approved plus pending pairs get new rounds; in manual mode the rest
    wait for reviewers, and a later run sees what they approved. Samples whose rounds
    are used up are quarantined as `qa_quota_not_met`, with why; samples whose LLM calls
    failed get no pairs, are quarantined as `llm_error` and retried by the next run. A
    sample's quarantine row goes once it is neither.
    """
    with stage("qa", settings, run_id) as (report, wh):
        papers = load_papers(wh)
        qa = load_qa(wh, settings.dataset_version)
        samples = load_samples(wh, settings.dataset_version, complete=True)
        work = [
            (sample, [papers[p] for p in sample.paper_ids], qa.get(sample.sample_id, []))
            for sample in samples
            if not is_ready(qa.get(sample.sample_id, []), settings)
        ]
        if not work:
            wh.clear_quarantine("qa", [s.sample_id for s in samples])
            report.note("every sample is ready")
            return report
        results, calls, made, cached = generate_qa_task(work, settings)
        report.save_calls(wh, calls)
        report.embeddings_made, report.embeddings_cached = made, cached
        pairs = [p for r in results for p in r.pairs]
        report.write(wh, "fct_qa_pairs", pairs, ("qa_id",))
        now = datetime.now(UTC).replace(tzinfo=None)
        report.write(wh, "fct_qa_decisions", auto_decisions(pairs, now), ("decision_id",))
        held = [q for item, r in zip(work, results, strict=True) if (q := _quarantine(item[0], r))]
        report.write(wh, "quarantine", held, ("item_id", "stage"), update=True)
        held_ids = {q.item_id for q in held}
        wh.clear_quarantine("qa", [s.sample_id for s in samples if s.sample_id not in held_ids])
        stuck = [q for q in held if q.reason == "qa_quota_not_met"]
        failed = len(held) - len(stuck)
        ready = sum(r.ready for r in results)
        existing = [p for item in work for p in item[2]]
        pending = sum(p.status == "pending" for p in existing + pairs)
        mode = "auto-approved" if settings.qa.review == "auto" else "pending human review"
        report.note(
            f"{len(pairs)} QA pairs generated ({mode}); {ready}/{len(work)} samples became "
            f"ready, {len(stuck)} can't reach their quota, {failed} hit an LLM error (retried "
            f"next run), {pending} pairs wait for review"
        )
        _quality_artifact(wh, settings)
    return report


def _quarantine(sample: Sample, result: QAResult) -> Quarantine | None:
    """Why a sample that is not ready is held at stage qa, or None while it just waits."""
    if result.llm_error:
        return Quarantine(sample.sample_id, "qa", "llm_error", result.llm_error)
    if result.stuck:
        return Quarantine(sample.sample_id, "qa", "qa_quota_not_met", result.why_not)
    return None


def _quality_artifact(wh: Warehouse, settings: Settings) -> None:
    """The dataset version's QA quality report in the Prefect UI (`lilo review report` in a
    terminal, with planted-fact coverage on the synthetic corpus)."""
    version = settings.dataset_version
    quality = quality_report(
        load_samples(wh, version), load_qa(wh, version), load_decisions(wh, version), settings
    )
    key = re.sub(r"[^a-z0-9-]+", "-", f"qa-quality-{version}".lower())
    create_markdown_artifact(
        key=key, markdown=quality.as_markdown(), description=f"QA quality, dataset {version}"
    )
