"""A probe run's results (docs/design.md §17): the curve rows of the cells it asked, and the
probe result version's page with the run's artifacts."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from lilo.flows._artifacts import publish
from lilo.flows._probe_plan import ProbePlan
from lilo.tasks.config import Settings
from lilo.tasks.files import write_atomic
from lilo.tasks.probes.report import probe_artifacts, render_probe_report
from lilo.warehouse import Warehouse
from lilo.warehouse.queries.probes import probe_curve_cells
from lilo.warehouse.queries.results import view

__all__ = ["publish_probe_report", "this_run_curve"]


def this_run_curve(
    wh: Warehouse,
    task_name: str,
    plans: list[ProbePlan],
    backbone: str,
    query_aware: bool,
    prompts: str,
) -> list[dict[str, Any]]:
    """The probe_curve rows of the cells this run asked."""
    variants = sorted({p.variant for p in plans})
    sizes = sorted({i.size for p in plans for i in p.items})
    return probe_curve_cells(wh, task_name, variants, sizes, backbone, query_aware, prompts)


def publish_probe_report(wh: Warehouse, settings: Settings, version: int) -> Path:
    """The probe version's page under `published/probes/version=NNNN/`, and the run's
    artifacts (the curve and summary tables, the U-curves image)."""
    curve = view(wh, "probe_curve")
    summary = view(wh, "probe_summary")
    versus = view(wh, "probe_vs_summary")
    path = settings.published_path.parent / "probes" / f"version={version:04d}" / "report.html"
    write_atomic(path, render_probe_report(version, curve, summary, versus), settings.data_dir)
    publish(*probe_artifacts(version, curve, summary, path), own_run=True)
    return path
