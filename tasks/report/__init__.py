"""What people look at: one result version as a static HTML page, and a run's Prefect
artifacts (built here, published by flows), both from the same `ReportData`."""

from lilo.tasks.report._artifacts import leaderboard_table, run_artifacts, stats_artifacts
from lilo.tasks.report._data import ReportData
from lilo.tasks.report._drill import HEADLINE, Answer, SummaryDetail
from lilo.tasks.report._html import render_html, render_pages
from lilo.tasks.report._plots import cache_figures, position_curve_png

__all__ = [
    "HEADLINE",
    "Answer",
    "ReportData",
    "SummaryDetail",
    "cache_figures",
    "leaderboard_table",
    "position_curve_png",
    "render_html",
    "render_pages",
    "run_artifacts",
    "stats_artifacts",
]
