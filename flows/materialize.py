"""Materialize stage: a new result version when scores changed, the analyst views, the
published serving copy and Parquet files, and the UI artifacts (§10)."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
from prefect import flow, task
from prefect.artifacts import create_markdown_artifact, create_table_artifact
from prefect.cache_policies import NO_CACHE

from flows._stage import StageReport, stage
from tasks.config import Settings
from tasks.reporting import markdown_table, plot_position_curve
from warehouse.results import materialize_results

__all__ = ["materialize_flow"]


@task(name="plot-position-curve", cache_policy=NO_CACHE)
def plot_task(curve: pd.DataFrame, path: Path) -> Path | None:
    return plot_position_curve(curve, path) if not curve.empty else None


@flow(name="materialize", log_prints=True)
def materialize_flow(settings: Settings, run_id: str) -> StageReport:
    with stage("materialize", settings, run_id) as (report, wh):
        result = materialize_results(wh, settings.dataset_version, run_id)
        if result is None:
            report.note("no scores yet: nothing to materialize")
            return report
        if result.created:
            report.added("res_versions", 1)
            report.added("res_scores", result.n_rows)
            report.note(f"result version {result.version} ({result.n_rows} score rows)")
        else:
            report.note(f"scores unchanged: result version {result.version} still current")
        published = wh.publish(settings.published_path)
        leaderboard = wh.df("SELECT * FROM leaderboard")
        curve = wh.df("SELECT * FROM position_curve")
        plot = plot_task(
            curve, published.parent / "plots" / f"position_curve_v{result.version:04d}.png"
        )
        create_table_artifact(
            key="leaderboard",
            table=leaderboard.astype(object)
            .where(leaderboard.notna(), None)
            .to_dict(orient="records"),
            description=f"Result version {result.version}: S_l, S_c, S_q (x100) by method, length",
        )
        create_markdown_artifact(
            key="results",
            markdown=(
                f"# lilo results, version {result.version}\n\n"
                f"{markdown_table(leaderboard)}\n\n"
                f"## S_single by paper position\n\n{markdown_table(curve)}\n\n"
                f"Published copy: `{published}`"
                + (f"\n\nPosition curve plot: `{plot}`" if plot else "")
            ),
            description="Leaderboard and position curve",
        )
    return report
