"""What a probe run asks (docs/design.md §17): the data it reads from the warehouse, and
per size the items, gold positions and baselines, from the published sets where imported,
else from sets the task makes (each task one module of tasks/probes/kinds/)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from lilo.flows._load import load_papers
from lilo.flows._stage import StageReport
from lilo.tasks.config import ProbeSettings
from lilo.tasks.embeddings import Embedder
from lilo.tasks.probe_records import ProbeItem
from lilo.tasks.probes import (
    CLONE_PROMPTS,
    PROMPTS_DATASET,
    ProbeDataError,
    ProbeInputs,
    ProbeTask,
    default_positions,
    variant_of,
)
from lilo.warehouse import Warehouse
from lilo.warehouse.queries.datasets import approved_single_pairs, dataset_assets, sample_papers
from lilo.warehouse.queries.probes import load_probe_items

__all__ = [
    "ProbeDataError",
    "ProbePlan",
    "plan_probes",
    "read_inputs",
    "stored_prompts",
]


@dataclass(frozen=True)
class ProbePlan:
    """One probe set to ask: its variant, items, positions and baselines."""

    variant: str
    items: list[ProbeItem]
    positions: tuple[int, ...]
    baselines: tuple[str, ...]
    made: bool  # made by lilo in this run (written to dim_probe_items)


def stored_prompts(wh: Warehouse) -> dict[str, str]:
    by_file = {f: name for name, f in CLONE_PROMPTS.items()}
    return {
        by_file[name]: content
        for name, content in dataset_assets(wh, PROMPTS_DATASET).items()
        if name in by_file
    }


def _positions(task_name: str, size: int, asked: Sequence[int]) -> tuple[int, ...]:
    if not asked:
        return default_positions(task_name, size)
    outside = [p for p in asked if p >= size]
    if outside:
        raise ProbeDataError(
            f"positions {', '.join(map(str, outside))} are outside 0..{size - 1} for "
            f"{task_name} of size {size}: give 0-based indices below {size}"
        )
    return tuple(dict.fromkeys(asked))


def read_inputs(wh: Warehouse, task: ProbeTask, cfg: ProbeSettings) -> ProbeInputs:
    """The published items of the sizes asked (unless the source excludes them) and, for
    sizes without them, what the task's sources build from: the NQ oracle file, else (or
    when asked) the warehouse's approved QA pairs with their papers."""
    sizes = task.sizes_of(cfg)
    published = {
        size: items
        for size in sizes
        if cfg.source in ("auto", "published")
        and (items := load_probe_items(wh, f"liu/{task.name}-{size}", cfg.examples))
    }
    if all(s in published for s in sizes):
        return ProbeInputs(published)
    oracle = []
    if "nq-oracle" in task.sources and cfg.source in ("auto", "nq-oracle"):
        oracle = load_probe_items(wh, "liu/nq-oracle", 10**9)
    if "warehouse" in task.sources and (
        cfg.source == "warehouse" or (cfg.source == "auto" and not oracle)
    ):
        return ProbeInputs(
            published, oracle, approved_single_pairs(wh), load_papers(wh), sample_papers(wh)
        )
    return ProbeInputs(published, oracle)


def plan_probes(
    inputs: ProbeInputs,
    task: ProbeTask,
    cfg: ProbeSettings,
    embedder: Embedder,
    report: StageReport,
) -> list[ProbePlan]:
    """What to ask, size by size, from the data the settings name: the published items
    where imported (and allowed), else the sets the task makes here (the embedder ranks the
    distractors of multi-document QA)."""
    if cfg.source not in task.sources:
        raise ProbeDataError(
            f"probe.source {cfg.source!r} does not apply to {task.name}: use one of "
            f"{', '.join(task.sources)}"
        )
    sizes = task.sizes_of(cfg)
    positions = {size: _positions(task.name, size, cfg.positions) for size in sizes}
    baselines = task.baselines_of(cfg)
    wanted = [s for s in sizes if s not in inputs.published]
    if cfg.source == "published" and wanted:
        raise ProbeDataError(
            f"no published {task.name} data of size {', '.join(map(str, wanted))} in the "
            "warehouse: import your clone first (`lilo import lost-in-the-middle CLONE`), or "
            "use --source auto"
        )
    made: list[ProbeItem] = []
    if wanted:
        made, left_out = task.make(wanted, cfg, inputs, embedder.embed)
        if left_out:
            report.note(f"{len(left_out)} questions left out of the data, e.g. {left_out[0]}")
    plans = []
    for size in sizes:
        if size in inputs.published:
            plans.append(
                ProbePlan("published", inputs.published[size], positions[size], baselines, False)
            )
            continue
        items = [i for i in made if i.size == size]
        variant = variant_of(items[0].probe_set) if items else "lilo"
        plans.append(ProbePlan(variant, items, positions[size], baselines, made=True))
    return plans
