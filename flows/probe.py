"""The Lost-in-the-Middle probes (docs/design.md §17): importing a clone of the
authors' repository, and `lilo probe kv|mdqa`: every item x gold position (and the
closed-book and oracle baselines) through the same LLM client as the summaries (cache,
rate limits, ledger, the threads or Dask runner), the answers written as they come, then
a new probe result version, its report page and the run's artifacts."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from prefect import flow, task
from prefect.cache_policies import NO_CACHE

from lilo.flows._artifacts import publish
from lilo.flows._load import load_papers
from lilo.flows._progress import StageProgress
from lilo.flows._run import recorded_run
from lilo.flows._stage import StageReport, open_warehouse, stage, unheld_stage
from lilo.flows._stage_writer import StageWriter
from lilo.flows._units import run_units
from lilo.tasks.config import Settings
from lilo.tasks.embeddings import Embedder
from lilo.tasks.errors import InputError
from lilo.tasks.files import write_atomic
from lilo.tasks.llm import LLMClient, make_client
from lilo.tasks.parallel import fan_out
from lilo.tasks.probes import (
    CLONE_PROMPTS,
    PROMPTS_DATASET,
    STAGE,
    ClonedProbes,
    ProbeAnswer,
    ProbeItem,
    ProbePrompts,
    ProbeUnit,
    ask,
    default_positions,
    kv_items,
    mdqa_from_oracle,
    mdqa_from_warehouse,
    read_clone,
    units_for,
    variant_of,
)
from lilo.tasks.probes.records import content_sha256
from lilo.tasks.probes.report import probe_artifacts, render_probe_report
from lilo.tasks.provenance import code_version
from lilo.tasks.records import PaperText, QAPair, Quarantine
from lilo.warehouse import Warehouse
from lilo.warehouse.probes import materialize_probes
from lilo.warehouse.queries.datasets import approved_single_pairs, dataset_assets, sample_papers
from lilo.warehouse.queries.probes import load_probe_items, probe_curve_cells, probe_item_hashes
from lilo.warehouse.queries.quarantine import quarantined_under
from lilo.warehouse.queries.results import view

__all__ = [
    "ProbeDataError",
    "ProbeImportResult",
    "ProbeRunResult",
    "import_probes_flow",
    "lilo_probes",
    "probe_flow",
]

TASKS = ("kv", "mdqa")


class ProbeDataError(InputError, ValueError):
    """The probe data asked for is not there (not imported, too few QA pairs...)."""


# -- import ----------------------------------------------------------------------------
@dataclass
class ProbeImportResult:
    files: dict[str, int]
    items: int
    prompts: list[str]
    absent: list[str]
    problems: list[str]
    rows_added: dict[str, int] = field(default_factory=dict)
    run_id: str = ""
    notes: list[str] = field(default_factory=list)


@task(name="read-lost-in-the-middle", cache_policy=NO_CACHE)
def read_clone_task(path: str) -> ClonedProbes:
    return read_clone(Path(path))


@flow(name="import-lost-in-the-middle", log_prints=True)
def import_probes_flow(path: str, settings: Settings) -> ProbeImportResult:
    """Store what the clone at `path` holds as probe items, and its prompt templates as
    assets of dataset `lost-in-the-middle`, in one transaction; a second import adds
    nothing. Raises CloneError (nothing recorded) when there is nothing to read."""
    cloned = read_clone_task(path)
    with recorded_run(settings, "import-probes") as run:
        with stage(STAGE, settings, run.run_id) as (report, wh):
            stored = probe_item_hashes(wh, [i.item_id for i in cloned.items])
            changed = [i for i in cloned.items if stored.get(i.item_id, i.sha256) != i.sha256]
            if changed:
                report.note(
                    f"{len(changed)} items were imported before with other content and are kept "
                    f"as they were (their answers read that content), e.g. {changed[0].item_id}"
                )
            assets = [
                {
                    "dataset_version": PROMPTS_DATASET,
                    "name": CLONE_PROMPTS[name],
                    "content": text,
                    "source": source,
                    "sha256": content_sha256(text),
                }
                for name, (text, source) in sorted(cloned.prompts.items())
            ]
            with wh.transaction():
                report.write(wh, "dim_probe_items", cloned.items, ("item_id",))
                report.write(wh, "dim_dataset_assets", assets, ("dataset_version", "name"))
                current = {q.item_id for q in cloned.problems}
                stale = [
                    i
                    for i in quarantined_under(wh, STAGE, f"{PROMPTS_DATASET}/")
                    if i not in current
                ]
                wh.clear_quarantine(STAGE, stale)
                report.write(wh, "quarantine", cloned.problems, ("item_id", "stage"), update=True)
        run.add(report)
    return ProbeImportResult(
        files=cloned.files,
        items=len(cloned.items),
        prompts=sorted(source for _, source in cloned.prompts.values()),
        absent=cloned.absent,
        problems=[q.detail for q in cloned.problems],
        rows_added=dict(report.rows_added),
        run_id=run.run_id,
        notes=list(report.notes),
    )


# -- the probe run ---------------------------------------------------------------------
@dataclass
class ProbeRunResult:
    task: str
    run_id: str
    backbone: str
    prompts: str
    units: int
    failed: int
    version: int | None
    report_path: str
    curve: list[dict[str, Any]]
    notes: list[str]
    llm_made: int = 0
    llm_cached: int = 0
    rows_added: int = 0
    partial: bool = False  # the version holds failed answers


@dataclass(frozen=True)
class _Plan:
    """One probe set to ask: its variant, items, positions and baselines."""

    variant: str
    items: list[ProbeItem]
    positions: tuple[int, ...]
    baselines: tuple[str, ...]
    made: bool  # made by lilo in this run (written to dim_probe_items)


def _stored_prompts(wh: Warehouse) -> dict[str, str]:
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
class _Inputs:
    """What a probe run reads from the warehouse before it closes it."""

    published: dict[int, list[ProbeItem]]
    oracle: list[ProbeItem]
    pairs: list[QAPair]
    papers: dict[str, PaperText]
    samples: dict[str, list[str]]


def _read_inputs(wh: Warehouse, task_name: str, settings: Settings) -> _Inputs:
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
    return _Inputs(
        published,
        oracle,
        approved_single_pairs(wh) if from_warehouse else [],
        load_papers(wh) if from_warehouse else {},
        sample_papers(wh) if from_warehouse else {},
    )


def _plans(
    inputs: _Inputs, task_name: str, settings: Settings, embedder: Embedder, report: StageReport
) -> list[_Plan]:
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
                _Plan("published", inputs.published[size], positions[size], baselines, False)
            )
            continue
        items = [i for i in made if i.size == size]
        variant = variant_of(items[0].probe_set) if items else "lilo"
        plans.append(_Plan(variant, items, positions[size], baselines, made=True))
    return plans


def _note_left_out(report: StageReport, left_out: list[str]) -> None:
    if left_out:
        report.note(f"{len(left_out)} questions left out of the data, e.g. {left_out[0]}")


def _ask_all(
    units: list[ProbeUnit],
    settings: Settings,
    llm: LLMClient,
    on_done: Callable[[list[tuple[ProbeUnit, ProbeAnswer]]], None],
    prompts: ProbePrompts,
) -> None:
    fan_out(lambda u: ask(u, prompts, llm), units, settings.llm.concurrency, on_done)


@flow(name="probe", log_prints=True)
def probe_flow(task_name: str, settings: Settings) -> ProbeRunResult:
    """Ask every item of the configured sizes at every gold position (and the baselines),
    write the answers, then materialize a probe result version with its report."""
    if task_name not in TASKS:
        raise ProbeDataError(f"unknown probe {task_name!r}: kv or mdqa")
    llm = make_client(settings)
    with recorded_run(settings, f"probe-{task_name}") as run:
        with unheld_stage(f"probe-{task_name}", run.run_id) as report:
            embedder = Embedder(settings)
            with open_warehouse(settings) as wh:
                prompts = ProbePrompts.choose(_stored_prompts(wh))
                inputs = _read_inputs(wh, task_name, settings)
            plans = _plans(inputs, task_name, settings, embedder, report)
            report.embeddings_made, report.embeddings_cached = embedder.computed, embedder.cached
            units = [
                u
                for plan in plans
                for u in units_for(
                    plan.items,
                    plan.variant,
                    plan.positions,
                    settings.probe.query_aware,
                    plan.baselines,
                )
            ]
            writer = StageWriter(report, settings)
            writer.queue_rows(
                "dim_probe_items", [i for p in plans if p.made for i in p.items], ("item_id",)
            )
            extra = {"config_hash": settings.config_hash(), "code_version": code_version()}
            failed = 0

            def finished(batch: list[tuple[ProbeUnit, ProbeAnswer]]) -> None:
                nonlocal failed
                answers = [a for _, a in batch]
                now = datetime.now(UTC).replace(tzinfo=None)
                writer.queue_rows(
                    "fct_probe_answers",
                    answers,
                    ("answer_id",),
                    update=True,
                    extra={**extra, "answered_at": now},
                )
                errors = [a for a in answers if a.error]
                # A failed call is an `llm_error` unit, as in scoring: the run ends `partial`,
                # `lilo failures` lists it, and the answer that later succeeds clears it.
                held = [Quarantine(a.answer_id, "probe", "llm_error", a.error) for a in errors]
                writer.queue_rows("quarantine", held, ("item_id", "stage"), update=True)
                writer.queue_cleared("probe", [a.answer_id for a in answers if not a.error])
                if errors and not failed:
                    report.note(f"an LLM call failed: {errors[0].error}")
                failed += len(errors)
                writer.flush()
                progress.advance(len(batch), len(errors))

            with (
                StageProgress(
                    report, len(units), line_every_s=settings.runner.progress_every_s
                ) as progress,
                writer,
            ):
                run_units(
                    "probe",
                    _ask_all,
                    make_client,
                    units,
                    settings,
                    writer.log,
                    finished,
                    prompts=prompts,
                )
            report.note(
                f"{len(units)} answers ({failed} failed) from {llm.backbone}, prompts: "
                f"{prompts.source}"
            )
        run.add(report)
        with stage(f"materialize-probes-{task_name}", settings, run.run_id) as (done, wh):
            version = materialize_probes(wh, run.run_id)
            path = ""
            if version is not None:
                if version.created:
                    done.added("res_probe_versions", 1)
                    done.added("res_probe_answers", version.n_answers)
                path = str(_publish_report(wh, settings, version.version))
            curve = _this_run(
                wh, task_name, plans, llm.backbone, settings.probe.query_aware, prompts.source
            )
        run.add(done)
    return ProbeRunResult(
        task=task_name,
        run_id=run.run_id,
        backbone=llm.backbone,
        prompts=prompts.source,
        units=len(units),
        failed=failed,
        version=version.version if version else None,
        partial=bool(version and version.partial),
        report_path=path,
        curve=curve,
        notes=report.notes + done.notes,
        llm_made=report.llm_made,
        llm_cached=report.llm_cached,
        rows_added=sum(report.rows_added.values()) + sum(done.rows_added.values()),
    )


def _this_run(
    wh: Warehouse,
    task_name: str,
    plans: list[_Plan],
    backbone: str,
    query_aware: bool,
    prompts: str,
) -> list[dict[str, Any]]:
    """The probe_curve rows of the cells this run asked."""
    variants = sorted({p.variant for p in plans})
    sizes = sorted({i.size for p in plans for i in p.items})
    return probe_curve_cells(wh, task_name, variants, sizes, backbone, query_aware, prompts)


def _publish_report(wh: Warehouse, settings: Settings, version: int) -> Path:
    """The probe version's page under `published/probes/version=NNNN/`, and the run's
    artifacts (the curve and summary tables, the U-curves image)."""
    curve = view(wh, "probe_curve")
    summary = view(wh, "probe_summary")
    versus = view(wh, "probe_vs_summary")
    path = settings.published_path.parent / "probes" / f"version={version:04d}" / "report.html"
    write_atomic(path, render_probe_report(version, curve, summary, versus), settings.data_dir)
    publish(*probe_artifacts(version, curve, summary, path), own_run=True)
    return path


@flow(name="lilo-probes", log_prints=True)
def lilo_probes(
    tasks: list[str] | None = None,
    backbones: list[dict[str, Any]] | None = None,
    overrides: dict[str, Any] | None = None,
) -> list[dict[str, Any]]:
    """The nightly probes: each task (kv, mdqa) on each backbone, a backbone being dotted
    `llm.*` settings over the worker's configuration (LILO_CONFIG, LILO_* variables), e.g.
    another model at the worker's endpoint (its address and key are the worker's:
    `run_settings`); no backbones: the configured one. Answers already asked come from the
    cache."""
    from lilo.tasks.config import run_settings

    runs = [run_settings({**(overrides or {}), **backbone}) for backbone in backbones or [{}]]
    results = []
    for settings in runs:
        for name in tasks or list(TASKS):
            result = probe_flow(name, settings)
            results.append(
                {
                    "task": name,
                    "backbone": result.backbone,
                    "version": result.version,
                    "answers": result.units,
                    "failed": result.failed,
                }
            )
    return results
