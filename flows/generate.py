"""Generate stage: ready samples x methods x target lengths on the configured backbone (§7)."""

from __future__ import annotations

from prefect import flow, task
from prefect.cache_policies import NO_CACHE

from flows._load import load_papers, load_qa, load_samples
from flows._stage import StageReport, stage
from tasks.config import Settings
from tasks.embeddings import Embedder
from tasks.llm import make_client
from tasks.methods import get_method
from tasks.parallel import map_threads
from tasks.provenance import code_version
from tasks.qa import is_ready
from tasks.records import Generation, LLMCall, PaperText, Sample

__all__ = ["generate_flow"]


@task(name="generate", cache_policy=NO_CACHE)
def generate_task(
    method_name: str,
    target_words: int,
    work: list[tuple[Sample, list[PaperText]]],
    settings: Settings,
) -> tuple[list[Generation], list[LLMCall], int, int]:
    llm = make_client(settings)
    embedder = Embedder(settings)
    method = get_method(method_name, settings)
    generations = map_threads(
        lambda item: method.run(item[0], item[1], target_words, llm, embedder),
        work,
        workers=settings.llm.concurrency,
    )
    return generations, llm.take_calls(), embedder.computed, embedder.cached


@flow(name="generate", log_prints=True)
def generate_flow(settings: Settings, run_id: str) -> StageReport:
    """Run every configured method at every target length on each ready sample, once."""
    with stage("generate", settings, run_id) as (report, wh):
        papers = load_papers(wh)
        qa = load_qa(wh, settings.dataset_version)
        ready = [
            s
            for s in load_samples(wh, settings.dataset_version, complete=True)
            if is_ready(qa.get(s.sample_id, []), settings)
        ]
        llm = make_client(settings)
        # Failed generations (error recorded) are tried again and replaced when they succeed.
        done = {
            r[0]
            for r in wh.con.execute(
                "SELECT generation_id FROM fct_generations WHERE error = ''"
            ).fetchall()
        }
        provenance = {
            "config_hash": settings.config_hash(),
            "code_version": code_version(),
        }
        made = 0
        for name in settings.generate.methods:
            spec = get_method(name, settings)
            for target in settings.generate.target_words:
                todo = [(s, [papers[p] for p in s.paper_ids]) for s in ready]
                work = [
                    (s, ps) for s, ps in todo if spec.generation_id(s, ps, target, llm) not in done
                ]
                if not work:
                    continue
                generations, calls, emb_made, emb_cached = generate_task(
                    name, target, work, settings
                )
                report.save_calls(wh, calls)
                report.embeddings_made += emb_made
                report.embeddings_cached += emb_cached
                report.write(
                    wh,
                    "fct_generations",
                    generations,
                    ("generation_id",),
                    update=True,
                    extra=provenance,
                )
                made += len(generations)
                for g in generations:
                    if g.error:
                        report.note(f"{name} @ {target} on {g.sample_id} failed: {g.error}")
        report.note(
            f"{made} generations for {len(ready)} ready samples"
            if made
            else "nothing new to generate"
        )
    return report
