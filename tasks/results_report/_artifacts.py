"""A run's results in the Prefect UI: tables, the figures as Markdown images (`data:` URIs,
shown where the UI's Markdown allows them) and a summary linking the rest. They go on the
run people open, the top flow run (the pipeline's), not on the stage's subflow run.

Artifact keys allow lowercase letters, digits and dashes; a keyed artifact keeps its
history across runs, so the same key per dataset or result kind lets the UI compare runs.
A run shows each artifact once: one the same as this run's last of that key (the dataset's
statistics, made by the samples stage and again with the results) is not made again.
"""

from __future__ import annotations

import functools
import hashlib
import json
import re
import socket
from pathlib import Path
from typing import Any

import pandas as pd
from prefect.artifacts import MarkdownArtifact, TableArtifact
from prefect.runtime import flow_run
from prefect.settings import PREFECT_UI_URL

from lilo.tasks.formatting import safe_markdown
from lilo.tasks.leaderboard import Board
from lilo.tasks.results_report._data import ReportData
from lilo.tasks.results_report._html import data_uri
from lilo.tasks.results_report._plots import histogram_png, position_curve_png
from lilo.tasks.samples.stats import DatasetStats, stats_markdown

__all__ = [
    "create_markdown_artifact",
    "create_run_artifacts",
    "create_stats_artifacts",
    "create_table_artifact",
    "leaderboard_table",
]


def _top_run() -> str | None:
    """The flow run at the top of this one's tree (itself when it has no parent)."""
    run_id = flow_run.get_id()
    return _root_of(run_id) if run_id else None


@functools.lru_cache(maxsize=8)
def _root_of(run_id: str) -> str:
    """Looked up once per flow run (each level costs API calls)."""
    return flow_run.get_root_flow_run_id()


_LAST: dict[tuple[str, str], str] = {}
"""(top flow run, key) -> digest of the last artifact this process made there."""


def _is_new(run_id: str | None, key: str, *content: Any) -> bool:
    """Whether the artifact differs from the run's last one of `key` (and remember it)."""
    if run_id is None:
        return True
    digest = hashlib.sha256(json.dumps(content, sort_keys=True, default=str).encode()).hexdigest()
    if _LAST.get((run_id, key)) == digest:
        return False
    _LAST[(run_id, key)] = digest
    return True


def create_markdown_artifact(markdown: str, key: str, description: str) -> None:
    """A Markdown artifact on the top flow run; no link it quotes runs a script
    (`safe_markdown`)."""
    run_id = _top_run()
    markdown, description = safe_markdown(markdown), safe_markdown(description)
    if _is_new(run_id, key, markdown, description):
        MarkdownArtifact(
            key=key, markdown=markdown, description=description, flow_run_id=run_id
        ).create()


def create_table_artifact(table: list[dict[str, Any]], key: str, description: str) -> None:
    """A table artifact on the top flow run."""
    run_id = _top_run()
    if _is_new(run_id, key, table, description):
        TableArtifact(key=key, table=table, description=description, flow_run_id=run_id).create()


def _key(*parts: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", "-".join(parts).lower()).strip("-")


def _records(df: pd.DataFrame) -> list[dict[str, Any]]:
    """Rows as JSON-ready dicts (NaN as null)."""
    return [
        {str(k): v for k, v in r.items()}
        for r in df.astype(object).where(df.notna(), None).to_dict(orient="records")
    ]


# The `leaderboard` view's columns as the table artifact shows them: what a row is and its
# scores first, where a reader looks; what they were measured with after.
_FIRST = ("variant", "target_words", "s_l", "s_c", "s_q", "scored", "expected")
_AFTER = ("method", "backbone", "judge", "dataset_version", "failed", "partial")


def leaderboard_table(leaderboard: pd.DataFrame) -> list[dict[str, Any]]:
    """The `leaderboard` view as the table artifact's rows: method (variant), length, S_l,
    S_c, S_q, n scored/expected, then the intervals and Overall, then backbone, judge,
    dataset version and the rest."""
    columns = list(leaderboard.columns)
    first = [c for c in _FIRST if c in columns]
    after = [c for c in _AFTER if c in columns]
    middle = [c for c in columns if c not in first and c not in after]
    return _records(leaderboard[first + middle + after])


def create_run_artifacts(
    data: ReportData, report: Path, qa_quality: str | None = None
) -> dict[str, str]:
    """Create the run's artifacts; returns {key: what it holds}, the summary's links. The
    `leaderboard` table and `results` Markdown are the materialize stage's own."""
    made: dict[str, str] = {
        "leaderboard": "leaderboard (table)",
        "results": "leaderboard, position curve and win-rates (Markdown)",
    }
    v = f"result version {data.version} (dataset {data.dataset_version})"
    if not data.position_curve.empty:
        create_table_artifact(
            _records(data.position_curve),
            key="position-curve",
            description=f"S_single by paper position, {v}",
        )
        made["position-curve"] = "S_single by paper position (table)"
        image = data_uri(position_curve_png(data.position_curve))
        create_markdown_artifact(
            f"# S_single by paper position, {v}\n\n![position curve]({image})\n",
            key="position-curve-plot",
            description=f"Position curve plot, {v}",
        )
        made["position-curve-plot"] = "the position curve (image)"
    if data.stats is not None:
        key = create_stats_artifacts(data.stats)
        made[key] = "dataset statistics with the histogram"
    if qa_quality:
        key = _key("qa-quality", data.dataset_version)
        create_markdown_artifact(
            qa_quality, key=key, description=f"QA quality, dataset {data.dataset_version}"
        )
        made[key] = "QA quality"
    create_table_artifact(
        _records(data.cost), key="cost", description=f"Tokens per summary by method, length; {v}"
    )
    made["cost"] = "tokens per summary by method and length (table)"
    create_table_artifact(
        _records(data.failures) or [{"failures": "none"}],
        key="failures",
        description=f"Every failed generation or score, with its reason; {v}",
    )
    made["failures"] = f"{len(data.failures)} failed generations or scores (table)"
    create_markdown_artifact(
        _summary(data, report, made), key="run-summary", description=f"Run summary, {v}"
    )
    return made


def create_stats_artifacts(stats: DatasetStats) -> str:
    """A dataset version's statistics with its histogram of input words (Markdown) and its
    surveys (table); returns the statistics' key."""
    key = _key("dataset", stats.dataset_version, "stats")
    histogram = (
        f"\n![input words per sample]({data_uri(histogram_png(stats))})\n" if stats.samples else ""
    )
    create_markdown_artifact(
        stats_markdown(stats) + histogram,
        key=key,
        description=f"Dataset {stats.dataset_version} statistics",
    )
    create_table_artifact(
        [
            {
                "survey": s.survey_id,
                "references": s.references,
                "resolved": s.resolved,
                "resolved_rate": round(s.resolved_rate, 3),
                "samples": s.samples,
            }
            for s in stats.surveys
        ],
        key=_key("dataset", stats.dataset_version, "surveys"),
        description=f"Dataset {stats.dataset_version}: references resolved per survey",
    )
    return key


def _summary(data: ReportData, report: Path, made: dict[str, str]) -> str:
    base = (PREFECT_UI_URL.value() or "").rstrip("/")
    lb = data.leaderboard
    cells = f"{int(lb['scored'].sum())}/{int(lb['expected'].sum())}" if not lb.empty else "0/0"
    board = Board(data.version, data.dataset_version, data.partial, False, lb)
    lines = [
        f"# lilo run: result version {data.version}",
        "",
        f"Dataset **{data.dataset_version}**; summaries scored/expected: **{cells}**"
        + (" (**partial**: see failures)" if data.partial else "")
        + ".",
        "",
        board.markdown(stacked=True) if not lb.empty else "_(no leaderboard rows)_",
        "",
        "| artifact | what it holds |",
        "|---|---|",
        *(f"| [{key}]({base}/artifacts/key/{key}) | {what} |" for key, what in made.items()),
        "",
        "The static report (one self-contained HTML page, its cells and samples beside it) is a "
        f"file on the machine that ran this flow, `{socket.gethostname()}`: "
        f"`{report.resolve()}`. Open it in a browser there, or copy its folder "
        f"`{report.parent.name}/` anywhere (it needs nothing else); `lilo report` writes it "
        "again from the published copy.",
    ]
    return "\n".join(lines) + "\n"
