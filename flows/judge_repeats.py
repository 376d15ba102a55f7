"""Judge repeats stage (`--judge-repeats N`, setting `stats.judge_repeats`): the judge asked
again N times for S_c and S_q of each scored generation (papers in the sample's own order),
each repeat a fresh sample at the judge's temperature cached under its own key, so the
judge's own spread per cell (`judge_spread` view) can be told from method differences."""

from __future__ import annotations

from typing import Any

from prefect import flow

from lilo.flows._load import load_generations, load_pack, load_papers, ready_samples
from lilo.flows._stage import StageReport, open_warehouse, timed_stage
from lilo.flows._stage_writer import StageWriter
from lilo.tasks.config import Settings
from lilo.tasks.llm import Completion, LLMClient, LLMError, make_judge_client
from lilo.tasks.parallel import fan_out
from lilo.tasks.records import Generation
from lilo.tasks.scoring import ScoreContext, get_scorer
from lilo.warehouse.queries.generations import judge_repeats_done

__all__ = ["RepeatedJudge", "judge_repeats_flow"]

_JUDGED = ("consistency", "quality")
# Each repeat's calls carry attempt = repeat * _SPAN + the scorer's own attempt (its retry).
_SPAN = 1000


class RepeatedJudge(LLMClient):
    """The judge, asked again: every call's cache key holds the repeat number."""

    def __init__(self, judge: LLMClient, repeat: int) -> None:
        super().__init__(judge.backend, judge.cache, judge.settings, judge.log)
        self.repeat = repeat

    def complete(self, messages: Any, *, attempt: int = 0, **kwargs: Any) -> Completion:
        return super().complete(messages, attempt=self.repeat * _SPAN + attempt, **kwargs)


@flow(name="judge-repeats", log_prints=True)
def judge_repeats_flow(settings: Settings, run_id: str) -> StageReport:
    repeats = settings.stats.judge_repeats
    with timed_stage("judge_repeats", run_id) as report:
        if not repeats:
            return report
        with open_warehouse(settings) as wh:
            ready, qa = ready_samples(wh, settings)
            samples = {s.sample_id: s for s in ready}
            pack = load_pack(wh, settings.dataset_version)
            generations = load_generations(wh, list(samples), scored_originals=True)
            done = judge_repeats_done(wh)
            papers = load_papers(wh)
        work = [
            (g, r)
            for g in generations
            for r in range(1, repeats + 1)
            if (g.generation_id, r) not in done
        ]
        if not work:
            report.note(f"judge repeats: all {repeats} done")
            return report
        writer = StageWriter(report, settings)
        judge = make_judge_client(settings, writer.log)
        scorers = [get_scorer(name) for name in _JUDGED]
        failed = 0

        def one(item: tuple[Generation, int]) -> list[dict[str, Any]]:
            g, repeat = item
            sample = samples[g.sample_id]
            approved = [p for p in qa.get(g.sample_id, []) if p.status == "approved"]
            again = RepeatedJudge(judge, repeat)
            texts = [papers[p] for p in sample.paper_ids]
            context = ScoreContext(g, sample, texts, approved, again, pack, settings)
            rows = [row for score in scorers for row in score(context).rows if row.score in _JUDGED]
            return [
                {"generation_id": g.generation_id, "score": row.score, "repeat": repeat,
                 "value": row.value, "judge": row.judge}
                for row in rows
            ]  # fmt: skip

        def finished(batch: list[tuple[tuple[Generation, int], list[dict[str, Any]]]]) -> None:
            writer.queue_rows(
                "fct_judge_repeats",
                [row for _, rows in batch for row in rows],
                ("generation_id", "score", "repeat"),
                extra={"run_id": run_id},
            )
            writer.flush()

        def guarded(item: tuple[Generation, int]) -> list[dict[str, Any]]:
            nonlocal failed
            try:
                return one(item)
            except LLMError as exc:  # retried by the next run: no row for this repeat
                failed += 1
                report.note(f"judge repeat {item[1]} of {item[0].generation_id}: {exc}")
                return []

        with writer:
            fan_out(guarded, work, workers=settings.judge.concurrency, on_done=finished)
        judge.take_calls()
        report.note(f"judge asked again {len(work)} times ({failed} failed), {repeats} repeats")
    return report
