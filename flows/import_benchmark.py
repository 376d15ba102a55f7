"""Import a published benchmark as a dataset version (docs/design.md §14): read and check its files
(tasks/benchmark/), run the cleaned-papers suite (docs/design.md §11) over its papers and keep what
it finds as per-paper warnings (the benchmark is imported as published), then write papers,
samples, the version, approved QA pairs with their decisions, the assets and every problem
in one warehouse transaction: nothing half-written, and a second import adds nothing."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from prefect import flow, task
from prefect.cache_policies import NO_CACHE

from lilo.flows._run import recorded_run
from lilo.flows._stage import StageReport, log, stage
from lilo.flows.clean import validate_papers_task
from lilo.tasks.benchmark import (
    STAGE,
    Benchmark,
    ImportedDataset,
    build_dataset,
    count_kinds,
    header_stripped,
    own_texts,
    read_longinoutbench,
)
from lilo.tasks.config import Settings
from lilo.tasks.errors import InputError
from lilo.tasks.text import counted
from lilo.tasks.validate import Validation
from lilo.warehouse import Warehouse
from lilo.warehouse.queries.datasets import dataset_exists, next_dataset_number, sample_ids
from lilo.warehouse.queries.papers import hashes_of, hashes_of_others
from lilo.warehouse.queries.quarantine import quarantined, quarantined_under

__all__ = ["ImportResult", "VersionExists", "import_benchmark_flow"]


class VersionExists(InputError):
    """The name is taken by a dataset version with other samples: versions are immutable."""


@dataclass
class ImportResult:
    """What an import read, kept and wrote; `error` says why nothing was written."""

    name: str
    group_folders: int
    samples: int
    papers: int  # paper files read in groups of three
    papers_kept: int  # distinct papers stored (groups may share one)
    warnings: dict[str, int]  # papers per kind of the suite's findings
    qa_single: int
    qa_cross: int
    assets: list[str]
    stand_ins: list[str]  # pack assets lilo's own stands in for
    problems: list[str]  # one line each, naming the file
    rows_added: dict[str, int] = field(default_factory=dict)
    run_id: str = ""
    notes: list[str] = field(default_factory=list)
    error: str = ""


@task(name="read-benchmark", cache_policy=NO_CACHE)
def read_benchmark_task(path: str, name: str, hard_links: bool) -> Benchmark:
    return read_longinoutbench(Path(path), name, hard_links)


@flow(name="import-benchmark", log_prints=True)
def import_benchmark_flow(path: str, name: str, settings: Settings) -> ImportResult:
    """Import the LongInOutBench clone at `path` as dataset version `name`. Raises
    BenchmarkError (nothing recorded) when there is nothing to read."""
    settings = settings.with_overrides({"dataset_version": name})
    bench = read_benchmark_task(path, name, settings.clone_hard_links)
    try:
        with recorded_run(settings, "import") as run:
            with stage(STAGE, settings, run.run_id) as (report, wh):
                bench = own_texts(bench, hashes_of(wh, [p.paper_id for p in bench.papers]))
                validation = validate_papers_task(
                    [header_stripped(p) for p in bench.papers],
                    settings,
                    run.run_id,
                    _earlier(wh, bench),
                )
                now = datetime.now(UTC).replace(tzinfo=None)
                dataset = build_dataset(bench, validation.quarantine, now)
                _check_immutable(wh, name, dataset)
                if dataset.samples:
                    _write(wh, report, settings, bench, dataset, validation, now)
                else:
                    _write_problems(wh, report, bench, dataset)
            run.add(report)
    except VersionExists as exc:
        return _result(bench, None, StageReport(STAGE, ""), error=str(exc))
    return _result(bench, dataset, report)


def _earlier(wh: Warehouse, bench: Benchmark) -> dict[str, str]:
    """Content hashes of papers kept before under other ids: a copy is quarantined."""
    return hashes_of_others(wh, [p.paper_id for p in bench.papers])


def _check_immutable(wh: Warehouse, name: str, dataset: ImportedDataset) -> None:
    existing = sample_ids(wh, name)
    written = existing or dataset_exists(wh, name)
    if written and existing != {s.sample_id for s in dataset.samples}:
        raise VersionExists(
            f"dataset {name} exists with {len(existing)} samples and this import would give a "
            f"different set of {len(dataset.samples)}: versions are immutable; import under "
            "another --name"
        )


def _write(
    wh: Warehouse,
    report: StageReport,
    settings: Settings,
    bench: Benchmark,
    dataset: ImportedDataset,
    validation: Validation,
    now: datetime,
) -> None:
    name = bench.name
    used = {p for s in dataset.samples for p in s.paper_ids}
    valid = [p for p in dataset.papers if p.paper_id in used]
    stored = hashes_of(wh, [p.paper_id for p in valid])
    if bench.renamed:
        report.note(
            f"{len(bench.renamed)} paper ids are in dim_papers with other text (another "
            "import's): this version's papers are stored under ids of their own text: "
            + ", ".join(bench.renamed.values())
        )
    news = any(p.paper_id not in stored for p in valid) or _new_problems(wh, dataset)
    version_row = _version_row(wh, settings, dataset, now)
    assets = [{"dataset_version": name, **a.__dict__} for a in bench.assets]
    with wh.transaction():
        report.write(wh, "dim_papers", valid, ("paper_id",))
        report.write(wh, "dim_samples", dataset.samples, ("sample_id",))
        if version_row is not None:
            report.write(wh, "dim_dataset_versions", [version_row], ("dataset_version",))
        report.write(wh, "fct_qa_pairs", dataset.qa_pairs, ("qa_id",))
        report.write(wh, "fct_qa_decisions", dataset.decisions, ("decision_id",))
        report.write(wh, "dim_dataset_assets", assets, ("dataset_version", "name"))
        _write_problems(wh, report, bench, dataset)
        if news:  # the suite's account, kept when it says something new (docs/design.md §11)
            summary = {"suite": "papers", "success": not validation.quarantine}
            report.write(
                wh,
                "validation_results",
                [{**summary, "summary": validation.summary}],
                ("run_id", "suite"),
            )
    log.info(
        "import: dataset %s: %s, %s, %s",
        name,
        counted(len(dataset.samples), "sample"),
        counted(len(dataset.qa_pairs), "QA pair"),
        counted(len(dataset.problems), "problem"),
    )


def _new_problems(wh: Warehouse, dataset: ImportedDataset) -> bool:
    """Problems not quarantined before for the same reason (the detail names files as the
    PATH given shows them, so it is left out)."""
    known = quarantined(wh, STAGE)
    return any((q.item_id, q.reason) not in known for q in dataset.problems)


def _write_problems(
    wh: Warehouse,
    report: StageReport,
    bench: Benchmark,
    dataset: ImportedDataset,
) -> None:
    """Every problem as a quarantine row (stage `import`); rows of this dataset's items
    that are fine now, and of its papers (imported with their warnings), are cleared."""
    current = {q.item_id for q in dataset.problems}
    stale = [i for i in quarantined_under(wh, STAGE, f"{bench.name}/") if i not in current]
    with wh.transaction():
        wh.clear_quarantine(STAGE, stale + sorted(p.paper_id for p in dataset.papers))
        report.write(wh, "quarantine", dataset.problems, ("item_id", "stage"), update=True)


def _version_row(
    wh: Warehouse, settings: Settings, dataset: ImportedDataset, now: datetime
) -> dict[str, Any] | None:
    """The version's row, or None when it was written by an earlier import."""
    name = settings.dataset_version
    if dataset_exists(wh, name):
        return None
    return {
        "dataset_version": name,
        "number": next_dataset_number(wh),
        "created_at": now,
        "surveys": list(dict.fromkeys(s.survey_id for s in dataset.samples if s.survey_id)),
        "n_samples": len(dataset.samples),
        "n_papers": len({p for s in dataset.samples for p in s.paper_ids}),
        "config_hash": settings.config_hash(),
    }


def _result(
    bench: Benchmark,
    dataset: ImportedDataset | None,
    report: StageReport,
    error: str = "",
) -> ImportResult:
    problems = dataset.problems if dataset is not None else bench.problems
    pairs = dataset.qa_pairs if dataset is not None else ()
    return ImportResult(
        name=bench.name,
        group_folders=bench.group_folders,
        samples=len(dataset.samples) if dataset is not None else 0,
        papers=bench.paper_files,
        papers_kept=len({p for s in dataset.samples for p in s.paper_ids}) if dataset else 0,
        warnings=count_kinds(p.warnings for p in dataset.papers) if dataset else {},
        qa_single=sum(p.kind == "single" for p in pairs),
        qa_cross=sum(p.kind == "cross" for p in pairs),
        assets=[a.name for a in bench.assets],
        stand_ins=list(bench.stand_ins),
        problems=[q.detail for q in problems],
        rows_added=dict(report.rows_added),
        run_id=report.run_id,
        notes=list(report.notes),
        error=error,
    )
