"""What people look at: one result version as a static HTML page, and a run's Prefect
artifacts, both from the same `ReportData`."""

from tasks.report._artifacts import create_run_artifacts, create_stats_artifacts
from tasks.report._data import ReportData
from tasks.report._html import render_html
from tasks.report._plots import cache_figures, position_curve_png

__all__ = [
    "ReportData",
    "cache_figures",
    "create_run_artifacts",
    "create_stats_artifacts",
    "position_curve_png",
    "render_html",
]
