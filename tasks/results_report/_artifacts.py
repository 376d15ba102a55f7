"""A run's results as Prefect artifacts (flows/_artifacts.py publishes them): tables, the
figures as Markdown images (`data:` URIs, shown where the UI's Markdown allows them) and a
summary linking the rest."""

from __future__ import annotations

import socket
from pathlib import Path
from typing import Any

import pandas as pd

from lilo.tasks.formatting import Artifact, artifact_key, pipe_table, table_records
from lilo.tasks.leaderboard import Board
from lilo.tasks.records import DatasetStats
from lilo.tasks.report_records import ReportData
from lilo.tasks.results_report._html import data_uri
from lilo.tasks.results_report._plots import histogram_png, position_curve_png
from lilo.tasks.samples.stats import stats_markdown
from lilo.tasks.scoring import leaderboard_scores

__all__ = ["leaderboard_table", "run_artifacts", "stats_artifacts"]


# The `leaderboard` view's columns as the table artifact shows them: what a row is and its
# scores first, where a reader looks; what they were measured with after.
_FIRST = ("variant", "target_words")
_AFTER = ("method", "backbone", "judge", "dataset_version", "failed", "partial")


def leaderboard_table(leaderboard: pd.DataFrame) -> list[dict[str, Any]]:
    """The `leaderboard` view as the table artifact's rows: method (variant), length, each
    leaderboard score (S_l, S_c, S_q, ...), n scored/expected, then the intervals and
    Overall, then backbone, judge, dataset version and the rest."""
    columns = list(leaderboard.columns)
    scores = [h.column for h in leaderboard_scores()]
    first = [c for c in (*_FIRST, *scores, "scored", "expected") if c in columns]
    after = [c for c in _AFTER if c in columns]
    middle = [c for c in columns if c not in first and c not in after]
    return table_records(leaderboard[first + middle + after])


def run_artifacts(
    data: ReportData, report: Path, ui_url: str, qa_quality: str | None = None
) -> list[Artifact]:
    """The run's artifacts, the summary last: it links the others (at `ui_url`, the Prefect
    UI's address). The `leaderboard` table and `results` Markdown are the materialize
    stage's own."""
    made: dict[str, str] = {
        "leaderboard": "leaderboard (table)",
        "results": "leaderboard, position curve and win-rates (Markdown)",
    }
    artifacts: list[Artifact] = []

    def add(artifact: Artifact, holds: str) -> None:
        artifacts.append(artifact)
        made[artifact.key] = holds

    v = f"result version {data.version} (dataset {data.dataset_version})"
    if not data.position_curve.empty:
        curve = table_records(data.position_curve)
        add(
            Artifact("position-curve", f"S_single by paper position, {v}", table=curve),
            "S_single by paper position (table)",
        )
        image = data_uri(position_curve_png(data.position_curve))
        plot = f"# S_single by paper position, {v}\n\n![position curve]({image})\n"
        add(
            Artifact("position-curve-plot", f"Position curve plot, {v}", markdown=plot),
            "the position curve (image)",
        )
    if data.stats is not None:
        stats, surveys = stats_artifacts(data.stats)
        add(stats, "dataset statistics with the histogram")
        artifacts.append(surveys)
    if qa_quality:
        key = artifact_key("qa-quality", data.dataset_version)
        add(
            Artifact(key, f"QA quality, dataset {data.dataset_version}", markdown=qa_quality),
            "QA quality",
        )
    cost = table_records(data.cost)
    add(
        Artifact("cost", f"Tokens per summary by method, length; {v}", table=cost),
        "tokens per summary by method and length (table)",
    )
    failures = table_records(data.failures) or [{"failures": "none"}]
    add(
        Artifact(
            "failures", f"Every failed generation or score, with its reason; {v}", table=failures
        ),
        f"{len(data.failures)} failed generations or scores (table)",
    )
    summary = _summary(data, report, made, ui_url)
    return [*artifacts, Artifact("run-summary", f"Run summary, {v}", markdown=summary)]


def stats_artifacts(stats: DatasetStats) -> list[Artifact]:
    """A dataset version's statistics with its histogram of input words (Markdown, first)
    and its surveys (table)."""
    histogram = (
        f"\n![input words per sample]({data_uri(histogram_png(stats))})\n" if stats.samples else ""
    )
    surveys = [
        {
            "survey": s.survey_id,
            "references": s.references,
            "resolved": s.resolved,
            "resolved_rate": round(s.resolved_rate, 3),
            "samples": s.samples,
        }
        for s in stats.surveys
    ]
    return [
        Artifact(
            artifact_key("dataset", stats.dataset_version, "stats"),
            f"Dataset {stats.dataset_version} statistics",
            markdown=stats_markdown(stats) + histogram,
        ),
        Artifact(
            artifact_key("dataset", stats.dataset_version, "surveys"),
            f"Dataset {stats.dataset_version}: references resolved per survey",
            table=surveys,
        ),
    ]


def _summary(data: ReportData, report: Path, made: dict[str, str], base: str) -> str:
    lb = data.leaderboard
    cells = f"{int(lb['scored'].sum())}/{int(lb['expected'].sum())}" if not lb.empty else "0/0"
    board = Board(data.version, data.dataset_version, data.partial, False, lb, scope=data.scope)
    lines = [
        f"# lilo run: result version {data.version}",
        "",
        f"Dataset **{data.dataset_version}**; summaries scored/expected: **{cells}**"
        + (" (**partial**: see failures)" if data.partial else "")
        + ".",
        "",
        board.markdown(stacked=True) if not lb.empty else "_(no leaderboard rows)_",
        "",
        pipe_table(
            ["artifact", "what it holds"],
            ([f"[{key}]({base}/artifacts/key/{key})", what] for key, what in made.items()),
        ),
        "",
        "The static report (one self-contained HTML page, its cells and samples beside it) is a "
        f"file on the machine that ran this flow, `{socket.gethostname()}`: "
        f"`{report.resolve()}`. Open it in a browser there, or copy its folder "
        f"`{report.parent.name}/` anywhere (it needs nothing else); `lilo report` writes it "
        "again from the published copy.",
    ]
    return "\n".join(lines) + "\n"
