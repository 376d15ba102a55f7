"""Generate stage: ready samples x methods x target lengths on the configured backbone (§7),
and, for the permutation experiment, every cyclic order of each sample's papers (§8)."""

from __future__ import annotations

from prefect import flow, task
from prefect.cache_policies import NO_CACHE

from flows._load import load_pack, load_papers, ready_samples
from flows._stage import StageReport, stage
from tasks.config import Settings
from tasks.embeddings import Embedder
from tasks.llm import make_client
from tasks.methods import Unit, get_method
from tasks.parallel import map_threads
from tasks.prompts import PromptPack
from tasks.provenance import code_version
from tasks.records import Generation, LLMCall

__all__ = ["generate_flow"]


@task(name="generate", cache_policy=NO_CACHE)
def generate_task(
    method_name: str, work: list[Unit], pack: PromptPack, settings: Settings
) -> tuple[list[Generation], list[LLMCall], int, int]:
    llm = make_client(settings)
    embedder = Embedder(settings)
    method = get_method(method_name, settings)
    generations = map_threads(
        lambda unit: method.run(unit, llm, embedder, pack), work, workers=settings.llm.concurrency
    )
    return generations, llm.take_calls(), embedder.computed, embedder.cached


@flow(name="generate", log_prints=True)
def generate_flow(settings: Settings, run_id: str) -> StageReport:
    """Run every configured method at every target length on each ready sample, once."""
    with stage("generate", settings, run_id) as (report, wh):
        papers = load_papers(wh)
        ready, _ = ready_samples(wh, settings)
        pack = load_pack(wh, settings.dataset_version)
        llm = make_client(settings)
        # Failed generations (error recorded) are tried again and replaced when they succeed.
        done = {
            r[0]
            for r in wh.con.execute(
                "SELECT generation_id FROM fct_generations WHERE error = ''"
            ).fetchall()
        }
        provenance = {"config_hash": settings.config_hash(), "code_version": code_version()}
        rotations = range(
            settings.samples.papers_per_sample if settings.generate.permutations else 1
        )
        made = failed = 0
        for name in settings.generate.methods:
            spec = get_method(name, settings)
            for target in settings.generate.target_words:
                units = [
                    Unit(s, [papers[p] for p in s.paper_ids], target, r)
                    for s in ready
                    for r in rotations
                ]
                work = [u for u in units if spec.generation_id(u, llm, pack) not in done]
                if not work:
                    continue
                generations, calls, emb_made, emb_cached = generate_task(name, work, pack, settings)
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
                        failed += 1
                        report.note(f"{g.variant} @ {target} on {g.sample_id} failed: {g.error}")
        report.note(
            f"{made} generations ({failed} failed) for {len(ready)} ready samples, "
            f"prompts: {pack.name}"
            if made
            else "nothing new to generate"
        )
    return report
