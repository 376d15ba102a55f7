"""`lilo probe TASK` and the nightly probes (docs/design.md §17): every item x gold
position (and the closed-book and oracle baselines) through the same LLM client as the
summaries (cache, rate limits, ledger, the threads or Dask runner), the answers written as
they come, then a new probe result version, its report page and the run's artifacts. What
to ask: flows/_probe_plan.py; the page: flows/_probe_report.py; importing the authors'
clone: flows/import_probes.py."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from prefect import flow

from lilo.flows._probe_plan import ProbePlan, plan_probes, read_inputs, stored_prompts
from lilo.flows._probe_report import publish_probe_report, this_run_curve
from lilo.flows._progress import StageProgress
from lilo.flows._run import recorded_run
from lilo.flows._stage import StageReport, open_warehouse, stage, timed_stage
from lilo.flows._stage_writer import StageWriter
from lilo.flows._units import run_units
from lilo.tasks.config import Settings
from lilo.tasks.embeddings import Embedder
from lilo.tasks.llm import LLMClient, make_client
from lilo.tasks.parallel import fan_out
from lilo.tasks.probe_records import ProbeAnswer, ProbeUnit
from lilo.tasks.probes import (
    ProbePrompts,
    ProbeTask,
    ask,
    available_probe_tasks,
    get_probe_task,
    units_for,
)
from lilo.tasks.provenance import code_version
from lilo.tasks.records import Quarantine
from lilo.warehouse.probes import materialize_probes

__all__ = ["ProbeRunResult", "lilo_probes", "probe_flow", "probe_work"]


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


def _ask_all(
    units: list[ProbeUnit],
    settings: Settings,
    llm: LLMClient,
    on_done: Callable[[list[tuple[ProbeUnit, ProbeAnswer]]], None],
    prompts: ProbePrompts,
) -> None:
    fan_out(lambda u: ask(u, prompts, llm), units, settings.llm.concurrency, on_done)


def probe_work(
    task: ProbeTask, settings: Settings, llm: LLMClient, embedder: Embedder, report: StageReport
) -> tuple[list[ProbePlan], list[ProbeUnit], ProbePrompts]:
    """What a probe run asks: its sets, every unit of them and the prompts (the
    warehouse's, in a base model's form where `llm.api` says completions)."""
    with open_warehouse(settings) as wh:
        prompts = ProbePrompts.choose(stored_prompts(wh))
        inputs = read_inputs(wh, task, settings.probe)
    if llm.backend.api() == "completions":  # a base model's form (`llm.api`)
        prompts = prompts.as_completions()
    plans = plan_probes(inputs, task, settings.probe, embedder, report)
    units = [
        u
        for plan in plans
        for u in units_for(
            plan.items, plan.variant, plan.positions, settings.probe.query_aware, plan.baselines
        )
    ]
    return plans, units, prompts


@flow(name="probe", log_prints=True)
def probe_flow(task_name: str, settings: Settings) -> ProbeRunResult:
    """Ask every item of the configured sizes at every gold position (and the baselines),
    write the answers, then materialize a probe result version with its report."""
    task = get_probe_task(task_name)
    llm = make_client(settings)
    with recorded_run(settings, f"probe-{task_name}") as run:
        with timed_stage(f"probe-{task_name}", run.run_id) as report:
            embedder = Embedder(settings.embedding, settings.data_dir)
            plans, units, prompts = probe_work(task, settings, llm, embedder, report)
            report.embeddings_made, report.embeddings_cached = embedder.computed, embedder.cached
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
                path = str(publish_probe_report(wh, settings, version.version))
            curve = this_run_curve(
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


@flow(name="lilo-probes", log_prints=True)
def lilo_probes(
    tasks: list[str] | None = None,
    backbones: list[dict[str, Any]] | None = None,
    overrides: dict[str, Any] | None = None,
) -> list[dict[str, Any]]:
    """The nightly probes: each task (all registered ones by default) on each backbone, a
    backbone being dotted `llm.*` settings over the worker's configuration (LILO_CONFIG,
    LILO_* variables), e.g. another model at the worker's endpoint (its address and key are
    the worker's: `run_settings`); no backbones: the configured one. Answers already asked
    come from the cache."""
    from lilo.tasks.config_loading import run_settings

    runs = [run_settings({**(overrides or {}), **backbone}) for backbone in backbones or [{}]]
    results = []
    for settings in runs:
        for name in tasks or available_probe_tasks():
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
