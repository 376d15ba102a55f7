"""What a probe run asks (docs/design.md §17): the data it reads from the warehouse, and
per size the items, gold positions and baselines, from the published sets where imported,
else from sets lilo makes."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from lilo.flows._load import load_papers
from lilo.flows._stage import StageReport
from lilo.tasks.config import Settings
from lilo.tasks.embeddings import Embedder
from lilo.tasks.errors import InputError
from lilo.tasks.probes import (
    CLONE_PROMPTS,
    PROMPTS_DATASET,
    ProbeItem,
    default_positions,
    kv_items,
    mdqa_from_oracle,
    mdqa_from_warehouse,
    variant_of,
)
from lilo.tasks.records import PaperText, QAPair
from lilo.warehouse import Warehouse
from lilo.warehouse.queries.datasets import approved_single_pairs, dataset_assets, sample_papers
from lilo.warehouse.queries.probes import load_probe_items

__all__ = [
    "ProbeDataError",
    "ProbeInputs",
    "ProbePlan",
    "plan_probes",
    "read_inputs",
    "stored_prompts",
]


class ProbeDataError(InputError, ValueError):
    """The probe data asked for is not there (not imported, too few QA pairs...)."""


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


@dataclass
class ProbeInputs:
    """What a probe run reads from the warehouse before it closes it."""

    published: dict[int, list[ProbeItem]]
    oracle: list[ProbeItem]
    pairs: list[QAPair]
    papers: dict[str, PaperText]
    samples: dict[str, list[str]]


def read_inputs(wh: Warehouse, task_name: str, settings: Settings) -> ProbeInputs:
    cfg = settings.probe
    kv = task_name == "kv"
    sizes = cfg.kv_keys if kv else cfg.mdqa_docs
    published = {
        size: items
        for size in sizes
        if cfg.source in ("auto", "published")
        and (items := load_probe_items(wh, f"liu/{task_name}-{size}", cfg.examples))
    }
    wanted = [s for s in sizes if s not in published]
    lilo_mdqa = not kv and bool(wanted)
    oracle = load_probe_items(wh, "liu/nq-oracle", 10**9) if lilo_mdqa else []
    from_warehouse = lilo_mdqa and (
        cfg.source == "warehouse" or (cfg.source == "auto" and not oracle)
    )
    return ProbeInputs(
        published,
        oracle,
        approved_single_pairs(wh) if from_warehouse else [],
        load_papers(wh) if from_warehouse else {},
        sample_papers(wh) if from_warehouse else {},
    )


def plan_probes(
    inputs: ProbeInputs, task_name: str, settings: Settings, embedder: Embedder, report: StageReport
) -> list[ProbePlan]:
    """What to ask, size by size, from the data the settings name: the published items
    where imported (and allowed), else sets lilo makes here (the embedder ranks the
    distractors of multi-document QA)."""
    cfg = settings.probe
    source, n = cfg.source, cfg.examples
    kv = task_name == "kv"
    allowed = (
        ("auto", "published", "lilo") if kv else ("auto", "published", "nq-oracle", "warehouse")
    )
    if source not in allowed:
        raise ProbeDataError(
            f"probe.source {source!r} does not apply to {task_name}: use one of "
            f"{', '.join(allowed)}"
        )
    sizes = cfg.kv_keys if kv else cfg.mdqa_docs
    positions = {size: _positions(task_name, size, cfg.positions) for size in sizes}
    baselines = (
        ()
        if kv
        else tuple(s for s, on in (("closed_book", cfg.closed_book), ("oracle", cfg.oracle)) if on)
    )
    wanted = [s for s in sizes if s not in inputs.published]
    if source == "published" and wanted:
        raise ProbeDataError(
            f"no published {task_name} data of size {', '.join(map(str, wanted))} in the "
            "warehouse: import your clone first (`lilo import lost-in-the-middle CLONE`), or "
            "use --source auto"
        )
    made: list[ProbeItem] = []
    if wanted and kv:
        made = [i for size in wanted for i in kv_items(size, n, cfg.seed)]
    elif wanted and source in ("auto", "nq-oracle") and inputs.oracle:
        made, left_out = mdqa_from_oracle(
            inputs.oracle, wanted, n, cfg.distractors, cfg.seed, embedder.embed
        )
        _note_left_out(report, left_out)
    elif wanted and source == "nq-oracle":
        raise ProbeDataError(
            "no NQ oracle file imported: `lilo import lost-in-the-middle CLONE` with a clone "
            "holding qa_data/nq-open-oracle.jsonl.gz, or use --source warehouse"
        )
    elif wanted:
        made, left_out = mdqa_from_warehouse(
            inputs.pairs,
            inputs.papers,
            inputs.samples,
            wanted,
            n,
            cfg.distractors,
            cfg.seed,
            embedder.embed,
        )
        _note_left_out(report, left_out)
        if not made:
            raise ProbeDataError(
                "no multi-document QA data: the warehouse has no approved single-paper QA "
                "pair whose answer lies in its evidence passage; run the pipeline "
                "(`lilo demo`, `lilo run`) or import the authors' clone"
            )
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


def _note_left_out(report: StageReport, left_out: list[str]) -> None:
    if left_out:
        report.note(f"{len(left_out)} questions left out of the data, e.g. {left_out[0]}")
