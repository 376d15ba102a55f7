"""What people look at: one result version as a static HTML page, and a run's Prefect
artifacts (built here, published by flows), both from the same `ReportData`."""

from lilo.tasks.results_report._artifacts import leaderboard_table, run_artifacts, stats_artifacts
from lilo.tasks.results_report._html import data_uri, render_html, render_pages, render_template
from lilo.tasks.results_report._plots import cache_figures, figure_png, position_curve_png, pyplot

__all__ = [
    "cache_figures",
    "data_uri",
    "figure_png",
    "leaderboard_table",
    "position_curve_png",
    "pyplot",
    "render_html",
    "render_pages",
    "render_template",
    "run_artifacts",
    "stats_artifacts",
]
