"""Generate stage: ready samples x methods x target lengths on the configured backbone (§7),
and, for the permutation experiment, every cyclic order of each sample's papers (§8).

Every unit (sample x method x length x order) goes into one fan-out under the endpoint's
concurrency and rate limits, so multi-step methods interleave; the warehouse is read
first, closed while the units run, and each finished batch is written in a short
transaction (docs/design.md §10, §12). With `runner.kind = "dask"` the units go to a Dask cluster in
batches (flows/_units.py) and come back, with their LLM calls, to be written the same way."""

from __future__ import annotations

from collections.abc import Callable

from prefect import flow

from lilo.flows._load import load_pack, load_papers, ready_samples
from lilo.flows._progress import StageProgress
from lilo.flows._stage import StageReport, open_warehouse, timed_stage
from lilo.flows._stage_writer import StageWriter
from lilo.flows._units import run_units
from lilo.tasks.config import Settings
from lilo.tasks.embeddings import Embedder
from lilo.tasks.llm import LLMClient, make_client
from lilo.tasks.methods import Unit, get_method
from lilo.tasks.parallel import fan_out
from lilo.tasks.prompt_packs import PromptPack
from lilo.tasks.provenance import code_version
from lilo.tasks.records import Generation, PaperText, Sample
from lilo.tasks.sweep import Point, method_variants
from lilo.tasks.text import counted
from lilo.warehouse.queries.generations import succeeded_generations

__all__ = ["Work", "generate_flow", "generation_work"]

Work = tuple[str, Point, Unit]
"""A method, the sweep point whose settings it runs with (() without a sweep), a unit."""


def _generate(
    work: list[Work],
    settings: Settings,
    llm: LLMClient,
    on_done: Callable[[list[tuple[Work, Generation]]], None],
    pack: PromptPack,
) -> tuple[int, int]:
    """Every unit of work on one client (one endpoint limit); `on_done` gets the finished
    generations as they come. Returns the embeddings computed and served from cache."""
    embedder = Embedder(settings.embedding, settings.data_dir)
    methods = {}
    for name, point in {(name, point) for name, point, _ in work}:
        at = settings.with_overrides(dict(point)) if point else settings
        methods[name, point] = get_method(name, at.generate, at.llm, at.embedding)
    # Twice the endpoint's slots: a unit between two calls (planning, retrieval) leaves
    # its slot to another.
    fan_out(
        lambda item: methods[item[0], item[1]].run(item[2], llm, embedder, pack),
        work,
        workers=2 * settings.llm.concurrency,
        on_done=on_done,
    )
    return embedder.computed, embedder.cached


def generation_work(
    settings: Settings,
    llm: LLMClient,
    papers: dict[str, PaperText],
    ready: list[Sample],
    pack: PromptPack,
    done: set[str],
) -> list[Work]:
    """The units the stage runs: each method variant at each length on each ready sample
    (every cyclic order of its papers for the permutation experiment), less those `done`."""
    work: list[Work] = []
    for name, point, spec in method_variants(settings):
        for target in settings.generate.target_words:
            units = [
                Unit(s, [papers[p] for p in s.paper_ids], target, r)
                for s in ready
                for r in range(len(s.paper_ids) if settings.generate.permutations else 1)
            ]
            work += [
                (name, point, u) for u in units if spec.generation_id(u, llm, pack) not in done
            ]
    return work


@flow(name="generate", log_prints=True)
def generate_flow(settings: Settings, run_id: str) -> StageReport:
    """Run every configured method at every target length on each ready sample, once."""
    with timed_stage("generate", run_id) as report:
        with open_warehouse(settings) as wh:
            papers = load_papers(wh)
            ready, _ = ready_samples(wh, settings)
            pack = load_pack(wh, settings.dataset_version)
            # Failed generations (error recorded) are tried again and replaced when they
            # succeed.
            done = succeeded_generations(wh)
        llm = make_client(settings)
        provenance = {"config_hash": settings.config_hash(), "code_version": code_version()}
        work = generation_work(settings, llm, papers, ready, pack, done)
        if not work:
            report.note("nothing new to generate")
            return report
        if settings.generate.fit_input != "off" and not llm.window.size()[0]:
            report.note(
                f"generate.fit_input={settings.generate.fit_input}: the endpoint's context "
                "window is unknown (it says none; set llm.context_window): no paper is cut"
            )
        writer = StageWriter(report, settings)
        failed = 0

        def finished(batch: list[tuple[Work, Generation]]) -> None:
            nonlocal failed
            generations = [g for _, g in batch]
            writer.queue_rows(
                "fct_generations", generations, ("generation_id",), update=True, extra=provenance
            )
            for (_, _, unit), g in batch:
                if g.error:
                    failed += 1
                    report.note(
                        f"{g.variant} @ {unit.target_words} on {g.sample_id} failed: {g.error}"
                    )
            writer.flush()
            progress.advance(len(batch), sum(bool(g.error) for g in generations))

        with (
            StageProgress(
                report, len(work), line_every_s=settings.runner.progress_every_s
            ) as progress,
            writer,
        ):
            counts = run_units(
                "generate",
                _generate,
                make_client,
                work,
                settings,
                writer.log,
                finished,
                pack=pack,
                batchable=lambda item: item[0] == "single",  # one call each (`llm.batch`)
            )
            report.embeddings_made = sum(made for made, _ in counts)
            report.embeddings_cached = sum(cached for _, cached in counts)
        report.note(
            f"{counted(len(work), 'generation')} ({failed} failed) for {len(ready)} ready "
            f"sample{'' if len(ready) == 1 else 's'}, "
            f"prompts: {pack.name}"
        )
    return report
