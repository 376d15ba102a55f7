"""QA stage: generate, check and approve QA pairs until each sample's quota is met (§6)."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime

from prefect import flow, task
from prefect.cache_policies import NO_CACHE
from prefect.utilities.annotations import quote

from lilo.flows._artifacts import publish
from lilo.flows._load import first_samples, load_papers, load_qa, load_samples
from lilo.flows._progress import StageProgress
from lilo.flows._stage import StageReport, open_warehouse, timed_stage
from lilo.flows._stage_writer import StageWriter
from lilo.tasks.config import ChatEndpointSettings, Settings
from lilo.tasks.embeddings import Embedder
from lilo.tasks.formatting import Artifact, artifact_key
from lilo.tasks.llm import make_client
from lilo.tasks.llm.ledger import CallLog
from lilo.tasks.parallel import fan_out
from lilo.tasks.qa import QAResult, auto_decisions, generate_qa, is_ready, quality_report
from lilo.tasks.records import PaperText, QAPair, Quarantine, Sample
from lilo.warehouse.queries.reviews import load_decisions

__all__ = ["qa_flow"]


Work = tuple[Sample, list[PaperText], list[QAPair]]


@task(name="generate-qa", cache_policy=NO_CACHE)
def generate_qa_task(
    work: list[Work],
    settings: Settings,
    log: CallLog,
    on_done: Callable[[list[tuple[Work, QAResult]]], None],
) -> tuple[int, int]:
    """QA rounds for each sample on one client, its calls appended to `log`; `on_done` gets
    the results as samples finish. Returns the embeddings computed and served from cache."""
    llm = make_client(_writer(settings), log)
    embedder = Embedder(settings.embedding, settings.data_dir)
    fan_out(
        lambda item: generate_qa(
            item[0], item[1], settings.qa, settings.judge, llm, embedder, existing=item[2]
        ),
        work,
        workers=settings.llm.concurrency,
        on_done=on_done,
    )
    llm.take_calls()
    return embedder.computed, embedder.cached


def _writer(settings: Settings) -> Settings:
    """The settings QA pairs are written and filtered with: the backbone's, or with
    `qa.writer = "offline"` the offline engine under its own model name."""
    if settings.qa.writer == "backbone":
        return settings
    offline = ChatEndpointSettings.model_fields["model"].default
    return settings.with_overrides({"llm": {"backend": "offline", "model": offline}})


@flow(name="qa", log_prints=True)
def qa_flow(settings: Settings, run_id: str) -> StageReport:
    """Bring every sample of the dataset version to its quota of approved QA pairs.

    Samples short of approved plus pending pairs get new rounds; in manual mode the rest
    wait for reviewers, and a later run sees what they approved. Samples whose rounds
    are used up are quarantined as `qa_quota_not_met`, with why; samples whose LLM calls
    failed get no pairs, are quarantined as `llm_error` and retried by the next run. A
    sample's quarantine row goes once it is neither. The warehouse is read first, closed
    while the LLM works, and each finished batch is written in a short transaction.
    """
    with timed_stage("qa", run_id) as report:
        with open_warehouse(settings) as wh:
            papers = load_papers(wh)
            qa = load_qa(wh, settings.dataset_version)
            samples = first_samples(
                load_samples(wh, settings.dataset_version, complete=True), settings.generate
            )
            work = [
                (sample, [papers[p] for p in sample.paper_ids], qa.get(sample.sample_id, []))
                for sample in samples
                if not is_ready(qa.get(sample.sample_id, []), settings.qa)
            ]
            if not work:
                wh.clear_quarantine("qa", [s.sample_id for s in samples])
                report.note("every sample is ready")
                return report
        todo = {sample.sample_id for sample, _, _ in work}
        ready_ids = [s.sample_id for s in samples if s.sample_id not in todo]
        writer = StageWriter(report, settings)
        writer.queue_cleared("qa", ready_ids)
        counts = {"pairs": 0, "ready": 0, "stuck": 0, "failed": 0, "pending": 0}
        counts["pending"] = sum(p.status == "pending" for _, _, ps in work for p in ps)

        def finished(batch: list[tuple[Work, QAResult]]) -> None:
            pairs = [p for _, r in batch for p in r.pairs]
            decisions = auto_decisions(pairs, datetime.now(UTC).replace(tzinfo=None))
            held = [q for (sample, _, _), r in batch if (q := _quarantine(sample, r))]
            held_ids = {q.item_id for q in held}
            cleared = [s.sample_id for (s, _, _), _ in batch if s.sample_id not in held_ids]

            writer.queue_rows("fct_qa_pairs", pairs, ("qa_id",))
            writer.queue_rows("fct_qa_decisions", decisions, ("decision_id",))
            writer.queue_rows("quarantine", held, ("item_id", "stage"), update=True)
            writer.queue_cleared("qa", cleared)
            writer.flush()
            stuck = sum(q.reason == "qa_quota_not_met" for q in held)
            counts["pairs"] += len(pairs)
            counts["ready"] += sum(r.ready for _, r in batch)
            counts["stuck"] += stuck
            counts["failed"] += len(held) - stuck
            counts["pending"] += sum(p.status == "pending" for p in pairs)
            progress.advance(len(batch), sum(bool(r.llm_error) for _, r in batch))

        with (
            StageProgress(
                report, len(work), line_every_s=settings.runner.progress_every_s
            ) as progress,
            writer,
        ):
            report.embeddings_made, report.embeddings_cached = generate_qa_task(  # type: ignore[call-overload]  # Prefect unwraps quote()
                quote(work), settings, writer.log, finished
            )
        mode = "auto-approved" if settings.qa.review == "auto" else "pending human review"
        report.note(
            f"{counts['pairs']} QA pairs generated ({mode}); {counts['ready']}/{len(work)} "
            f"samples became ready, {counts['stuck']} can't reach their quota, "
            f"{counts['failed']} hit an LLM error (retried next run), {counts['pending']} "
            "pairs wait for review"
        )
        _quality_artifact(settings)
    return report


def _quarantine(sample: Sample, result: QAResult) -> Quarantine | None:
    """Why a sample that is not ready is held at stage qa, or None while it just waits."""
    if result.llm_error:
        return Quarantine(sample.sample_id, "qa", "llm_error", result.llm_error)
    if result.stuck:
        return Quarantine(sample.sample_id, "qa", "qa_quota_not_met", result.why_not)
    return None


def _quality_artifact(settings: Settings) -> None:
    """The dataset version's QA quality report in the Prefect UI (`lilo review report` in a
    terminal, with planted-fact coverage on the synthetic corpus)."""
    version = settings.dataset_version
    with open_warehouse(settings) as wh:
        quality = quality_report(
            load_samples(wh, version),
            load_qa(wh, version),
            load_decisions(wh, version),
            version,
            settings.qa,
        )
    publish(
        Artifact(
            artifact_key("qa-quality", version),
            f"QA quality, dataset {version}",
            markdown=quality.as_markdown(),
        ),
        own_run=True,
    )
