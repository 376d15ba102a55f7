"""Score stage: S_l, S_c (with S_single by position) and S_q for every new generation (§8)."""

from __future__ import annotations

from prefect import flow, task
from prefect.cache_policies import NO_CACHE

from flows._load import load_generations, load_papers, load_qa, load_samples
from flows._stage import StageReport, stage
from tasks.config import Settings
from tasks.llm import LLMError, make_client
from tasks.parallel import map_threads
from tasks.records import (
    Generation,
    LLMCall,
    PaperText,
    QAPair,
    Quarantine,
    Sample,
    ScoreRow,
)
from tasks.scoring import available_scorers, get_scorer

__all__ = ["score_flow"]


@task(name="score", cache_policy=NO_CACHE)
def score_task(
    work: list[tuple[Generation, Sample, list[PaperText], list[QAPair]]], settings: Settings
) -> tuple[list[ScoreRow], list[Quarantine], list[LLMCall]]:
    """Score rows, and a quarantine record per generation not fully scored: `llm_error`
    (no rows at all, so the next run retries it) or `judge_unusable` (the scores left out)."""
    llm = make_client(settings)
    scorers = [get_scorer(name, settings) for name in available_scorers()]

    def score_one(
        item: tuple[Generation, Sample, list[PaperText], list[QAPair]],
    ) -> tuple[list[ScoreRow], Quarantine | None]:
        generation, sample, papers, qa = item
        try:
            scored = [s.score(generation, sample, papers, qa, llm) for s in scorers]
        except LLMError as exc:
            return [], Quarantine(generation.generation_id, "score", "llm_error", str(exc))
        rows = [row for s in scored for row in s.rows]
        unscored = "; ".join(f"{name}: {why}" for s in scored for name, why in s.unscored.items())
        if unscored:
            return rows, Quarantine(generation.generation_id, "score", "judge_unusable", unscored)
        return rows, None

    results = map_threads(score_one, work, workers=settings.llm.concurrency)
    rows = [row for batch, _ in results for row in batch]
    failed = [failure for _, failure in results if failure]
    return rows, failed, llm.take_calls()


@flow(name="score", log_prints=True)
def score_flow(settings: Settings, run_id: str) -> StageReport:
    """Score each generation of the dataset version that has no scores yet. One whose
    scoring hit an LLM error gets no rows and is quarantined, so the next run retries it;
    once fully scored, its quarantine row goes."""
    with stage("score", settings, run_id) as (report, wh):
        samples = {
            s.sample_id: s for s in load_samples(wh, settings.dataset_version, complete=True)
        }
        generations = load_generations(
            wh,
            "error = '' AND list_contains(?, sample_id) AND generation_id NOT IN "
            "(SELECT generation_id FROM fct_scores)",
            [list(samples)],
        )
        if not generations:
            report.note("nothing new to score")
            return report
        papers = load_papers(wh)
        qa = load_qa(wh, settings.dataset_version)
        work = [
            (
                g,
                samples[g.sample_id],
                [papers[p] for p in samples[g.sample_id].paper_ids],
                [p for p in qa.get(g.sample_id, []) if p.status == "approved"],
            )
            for g in generations
        ]
        # Scores are written per batch of generations, so a crash keeps what was finished.
        batch = max(1, settings.llm.concurrency * 4)
        quarantined = 0
        for start in range(0, len(work), batch):
            chunk = work[start : start + batch]
            rows, failed, calls = score_task(chunk, settings)
            report.save_calls(wh, calls)
            with wh.transaction():
                report.write(wh, "fct_scores", rows, ("generation_id", "score"))
                report.write(wh, "quarantine", failed, ("item_id", "stage"), update=True)
                bad = {f.item_id for f in failed}
                wh.clear_quarantine(
                    "score", [g.generation_id for g, *_ in chunk if g.generation_id not in bad]
                )
            quarantined += len(failed)
        report.note(f"{len(generations)} generations to score, {quarantined} of them quarantined")
    return report
