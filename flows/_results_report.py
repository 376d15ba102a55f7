"""The report of a result version and the run's artifacts, from a warehouse connection:
the glue between the pure `tasks.results_report` and what only flows may read (dataset statistics,
QA decisions). `lilo report` uses it on the published copy, the materialize stage on the
warehouse it holds."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from lilo.flows._artifacts import publish, ui_url
from lilo.flows._load import load_qa, load_samples
from lilo.flows.samples import load_dataset_stats
from lilo.tasks.config import Settings
from lilo.tasks.files import write_atomic
from lilo.tasks.qa import quality_report
from lilo.tasks.report_records import ReportData
from lilo.tasks.results_report import cache_figures, render_pages, run_artifacts
from lilo.tasks.scoring import leaderboard_scores
from lilo.warehouse import Warehouse
from lilo.warehouse.queries.details import read_details
from lilo.warehouse.queries.results import read_report_data
from lilo.warehouse.queries.reviews import load_decisions
from lilo.warehouse.read_only import Connection

__all__ = ["publish_report", "report_path", "write_report"]


def report_path(results: Path, version: int) -> Path:
    """Next to the version's Parquet: `results/version=NNNN/report.html`."""
    return results / f"version={version:04d}" / "report.html"


def _read(con: Connection, version: int | None) -> ReportData:
    data = read_report_data(con, version)
    return replace(data, stats=load_dataset_stats(con, data.dataset_version))


def _write(data: ReportData, con: Connection, settings: Settings) -> Path:
    """The report page and its drill-down pages (a page per leaderboard cell and per
    sample) under the published results; returns the report page's path."""
    path = report_path(settings.published_path.parent / "results", data.version)
    headlines = [h.name for h in leaderboard_scores()]
    details = read_details(con, data.version, headlines=headlines)
    for name, page in render_pages(data, details).items():
        # a reader never sees half a page; a link on the way is never written through
        write_atomic(path.parent / name, page, settings.data_dir)
    return path


def write_report(con: Connection, settings: Settings, version: int | None) -> Path:
    """Write result version `version`'s (default: the latest) report and its drill-down
    pages under the published results. NoResults when there is no such version."""
    return _write(_read(con, version), con, settings)


def publish_report(wh: Warehouse, settings: Settings, version: int, *, changed: bool) -> Path:
    """The materialize stage's report of `version` next to its published Parquet (written
    again only when the version is new, or its report missing), and the run's artifacts
    (tables, figures, QA quality, a summary linking them)."""
    cache_figures(settings)
    data = _read(wh.con, version)
    results = settings.published_path.parent / "results"
    path = report_path(results, version)
    if changed or not path.exists():
        path = _write(data, wh.con, settings)
    ds = settings.dataset_version
    quality = quality_report(
        load_samples(wh, ds), load_qa(wh, ds), load_decisions(wh, ds), ds, settings.qa
    ).as_markdown()
    publish(*run_artifacts(data, path, ui_url(), quality))
    return path
