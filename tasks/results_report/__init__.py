"""What people look at: one result version as a static HTML page, and a run's Prefect
artifacts, both from the same `ReportData`."""

from lilo.tasks.results_report._artifacts import (
    create_markdown_artifact,
    create_run_artifacts,
    create_stats_artifacts,
    create_table_artifact,
    leaderboard_table,
)
from lilo.tasks.results_report._data import ReportData
from lilo.tasks.results_report._drill import HEADLINE, Answer, SummaryDetail
from lilo.tasks.results_report._html import render_html, render_pages
from lilo.tasks.results_report._plots import cache_figures, position_curve_png

__all__ = [
    "HEADLINE",
    "Answer",
    "ReportData",
    "SummaryDetail",
    "cache_figures",
    "create_markdown_artifact",
    "create_run_artifacts",
    "create_stats_artifacts",
    "create_table_artifact",
    "leaderboard_table",
    "position_curve_png",
    "render_html",
    "render_pages",
]
