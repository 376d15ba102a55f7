"""Score stage: S_l, S_c (with S_single by position) and S_q for every new generation, and
the pairwise win-rates (§8), all judged by the configured judge with the dataset version's
prompts and checklists."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from prefect import flow, task
from prefect.cache_policies import NO_CACHE

from lilo.flows._load import load_generations, load_pack, load_papers, ready_samples
from lilo.flows._progress import StageProgress
from lilo.flows._stage import StageReport, open_warehouse, timed_stage
from lilo.flows._stage_writer import StageWriter
from lilo.flows._units import run_units
from lilo.tasks.config import Settings
from lilo.tasks.llm import LLMClient, LLMError, make_judge_client
from lilo.tasks.llm.ledger import CallLog
from lilo.tasks.methods import get_method
from lilo.tasks.parallel import fan_out, map_threads
from lilo.tasks.prompt_packs import PromptPack
from lilo.tasks.records import Generation, PaperText, QAPair, Quarantine, Sample, ScoreRow
from lilo.tasks.redact import configured_secrets, redact
from lilo.tasks.scoring import ScoreContext, available_scorers, get_scorer
from lilo.tasks.scoring.winrate import judge_pair
from lilo.tasks.text import counted
from lilo.warehouse.queries.generations import judged_pairs, scored_generations

__all__ = ["score_flow", "winrate_pairs"]

Work = tuple[Generation, Sample, list[PaperText], list[QAPair]]
# A generation's score rows, and its quarantine record when it is not fully scored.
Outcome = tuple[list[ScoreRow], Quarantine | None]


def _score(
    work: list[Work],
    settings: Settings,
    judge: LLMClient,
    on_done: Callable[[list[tuple[Work, Outcome]]], None],
    pack: PromptPack,
) -> None:
    """Score rows per generation, with a quarantine record when it is not fully scored:
    `llm_error` (no rows at all, so the next run retries it) or `judge_unusable` (the
    scores left out); `on_done` gets them as generations finish."""
    scorers = [get_scorer(name) for name in available_scorers()]
    secrets = configured_secrets(settings)

    def score_one(item: Work) -> Outcome:
        generation, sample, papers, qa = item
        try:
            context = ScoreContext(generation, sample, papers, qa, judge, pack, settings)
            scored = [score(context) for score in scorers]
        except LLMError as exc:
            why = redact(str(exc), secrets)
            return [], Quarantine(generation.generation_id, "score", "llm_error", why)
        rows = [row for s in scored for row in s.rows]
        unscored = "; ".join(f"{name}: {why}" for s in scored for name, why in s.unscored.items())
        unscored = redact(unscored, secrets)  # a judge's unusable reply may echo a key
        if unscored:
            return rows, Quarantine(generation.generation_id, "score", "judge_unusable", unscored)
        return rows, None

    fan_out(score_one, work, workers=settings.judge.concurrency, on_done=on_done)


@task(name="winrate", cache_policy=NO_CACHE)
def winrate_task(
    pairs: list[tuple[Generation, Generation]], pack: PromptPack, settings: Settings, log: CallLog
) -> tuple[list[dict[str, Any]], list[Quarantine]]:
    judge = make_judge_client(settings, log)

    def one(pair: tuple[Generation, Generation]) -> tuple[list[dict[str, Any]], list[str]]:
        try:
            return judge_pair(*pair, judge, pack, settings.judge)
        except LLMError as exc:
            return [], [str(exc)]

    results = map_threads(one, pairs, workers=settings.judge.concurrency)
    judge.take_calls()
    rows = [row for batch, _ in results for row in batch]
    failed = [
        Quarantine(
            f"{a.generation_id}|{b.generation_id}", "winrate", "judge_unusable", "; ".join(f)
        )
        for (a, b), (_, f) in zip(pairs, results, strict=True)
        if f
    ]
    return rows, failed


@flow(name="score", log_prints=True)
def score_flow(settings: Settings, run_id: str) -> StageReport:
    """Score each generation of the selected samples that has no scores yet. One whose
    scoring hit an LLM error gets no rows and is quarantined, so the next run retries it;
    once fully scored, its quarantine row goes. The warehouse is read first, closed while
    the judge works, and each finished batch is written in a short transaction."""
    with timed_stage("score", run_id) as report:
        with open_warehouse(settings) as wh:
            ready, qa = ready_samples(wh, settings)
            samples = {s.sample_id: s for s in ready}
            pack = load_pack(wh, settings.dataset_version)
            generations = load_generations(wh, list(samples))
            scored = scored_generations(wh)
            judged = judged_pairs(wh)
            papers = load_papers(wh)
        judge = make_judge_client(settings).backbone
        if settings.judge.backend is None:
            report.note(f"no judge configured: the generation backbone {judge} judges")
        todo = [g for g in generations if g.generation_id not in scored]
        work = [
            (
                g,
                samples[g.sample_id],
                [papers[p] for p in samples[g.sample_id].paper_ids],
                [p for p in qa.get(g.sample_id, []) if p.status == "approved"],
            )
            for g in todo
        ]
        writer = StageWriter(report, settings)
        quarantined = 0

        def finished(batch: list[tuple[Work, Outcome]]) -> None:
            nonlocal quarantined
            rows = [row for _, (scores, _) in batch for row in scores]
            failed = [f for _, (_, f) in batch if f]
            bad = {f.item_id for f in failed}
            cleared = [g.generation_id for (g, *_), _ in batch if g.generation_id not in bad]
            quarantined += len(failed)
            writer.queue_rows("fct_scores", rows, ("generation_id", "score"))
            writer.queue_rows("quarantine", failed, ("item_id", "stage"), update=True)
            writer.queue_cleared("score", cleared)
            writer.flush()
            progress.advance(len(batch), len(failed))

        with (
            StageProgress(
                report, len(work), line_every_s=settings.runner.progress_every_s
            ) as progress,
            writer,
        ):
            run_units(
                "score",
                _score,
                make_judge_client,
                work,
                settings,
                writer.log,
                finished,
                pack=pack,
                batchable=lambda _: True,  # the judge's calls, answers before grades
            )
            quarantined += _winrates(report, writer, settings, generations, judged, pack)
        report.note(
            f"{counted(len(todo), 'generation')} to score, {quarantined} quarantined; "
            f"judge {judge}, prompts {pack.name}"
        )
    return report


def winrate_pairs(
    settings: Settings, generations: list[Generation], judged: set[tuple[str, str]]
) -> list[tuple[Generation, Generation]]:
    """The pairs `_winrates` judges: each other variant against `winrate_against` per sample
    and length (papers in the sample's own order), less those `judged`."""
    if not settings.winrate_against:
        return []
    s = settings
    base = get_method(s.winrate_against, s.generate, s.llm, s.embedding).variant
    cells: dict[tuple[str, int], list[Generation]] = {}
    for g in generations:
        if g.rotation == 0:
            cells.setdefault((g.sample_id, g.target_words), []).append(g)
    return [
        (a, b)
        for cell in cells.values()
        for b in cell
        if (b.variant or b.method) == base
        for a in cell
        if (a.variant or a.method) != base and (a.generation_id, b.generation_id) not in judged
    ]


def _winrates(
    report: StageReport,
    writer: StageWriter,
    settings: Settings,
    generations: list[Generation],
    judged: set[tuple[str, str]],
    pack: PromptPack,
) -> int:
    """Each other method variant against `winrate_against`, per sample and length (papers
    in the sample's own order), for the pairs not judged yet. The setting names a method
    as `--methods` does: `ral_writer` is its variant under these settings, and
    `agentwrite[sees-written]` that variant, not every AgentWrite."""
    pairs = winrate_pairs(settings, generations, judged)
    if not pairs:
        return 0
    rows, failed = winrate_task(pairs, pack, settings, writer.log)
    bad = {f.item_id for f in failed}
    ids = [f"{a.generation_id}|{b.generation_id}" for a, b in pairs]
    writer.queue_rows(
        "fct_winrate", rows, ("generation_a", "generation_b", "aspect", "item", "shown")
    )
    writer.queue_rows("quarantine", failed, ("item_id", "stage"), update=True)
    writer.queue_cleared("winrate", [i for i in ids if i not in bad])
    return len(failed)
