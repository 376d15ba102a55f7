"""Score stage: S_l, S_c (with S_single by position) and S_q for every new generation (§8)."""

from __future__ import annotations

from prefect import flow, task
from prefect.cache_policies import NO_CACHE

from flows._load import load_generations, load_papers, load_qa, load_samples
from flows._stage import StageReport, stage
from tasks.config import Settings
from tasks.llm import make_client
from tasks.parallel import map_threads
from tasks.records import Generation, LLMCall, PaperText, QAPair, Sample, ScoreRow
from tasks.scoring import available_scorers, get_scorer

__all__ = ["score_flow"]


@task(name="score", cache_policy=NO_CACHE)
def score_task(
    work: list[tuple[Generation, Sample, list[PaperText], list[QAPair]]], settings: Settings
) -> tuple[list[ScoreRow], list[LLMCall]]:
    llm = make_client(settings)
    scorers = [get_scorer(name, settings) for name in available_scorers()]

    def score_one(item: tuple[Generation, Sample, list[PaperText], list[QAPair]]) -> list[ScoreRow]:
        generation, sample, papers, qa = item
        return [row for s in scorers for row in s.score(generation, sample, papers, qa, llm)]

    rows = map_threads(score_one, work, workers=settings.llm.concurrency)
    return [r for batch in rows for r in batch], llm.take_calls()


@flow(name="score", log_prints=True)
def score_flow(settings: Settings, run_id: str) -> StageReport:
    """Score each generation of the dataset version that has no scores yet."""
    with stage("score", settings, run_id) as (report, wh):
        samples = {s.sample_id: s for s in load_samples(wh, settings.dataset_version)}
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
        for start in range(0, len(work), batch):
            rows, calls = score_task(work[start : start + batch], settings)
            report.save_calls(wh, calls)
            report.write(wh, "fct_scores", rows, ("generation_id", "score"))
        report.note(f"{len(generations)} generations scored")
    return report
