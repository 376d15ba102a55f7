"""A run's record as a Markdown artifact of its Prefect flow run."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from prefect.runtime import flow_run

from lilo.flows._artifacts import publish
from lilo.flows._stage import StageReport, log
from lilo.tasks.formatting import Artifact, pipe_table

__all__ = ["run_artifact"]


def run_artifact(row: dict[str, Any], reports: list[StageReport], published: Path) -> None:
    """The run's record as a markdown artifact of the flow run itself (its stages' artifacts
    belong to their own subflow runs): status, each stage's time, calls and rows, and where
    the results are."""
    if flow_run.get_id() is None:  # not in a flow run (a bench, a test): nothing to attach to
        return
    lines = [
        f"# Run `{row['run_id']}`: {row['status']}",
        "",
        *([f"> {row['message']}", ""] if row.get("message") else []),
        pipe_table(
            ["stage", "seconds", "LLM calls made", "from cache", "rows added"],
            (
                [r.stage, f"{r.seconds:.1f}", r.llm_made, r.llm_cached, sum(r.rows_added.values())]
                for r in reports
            ),
            1,
        ),
        "",
        f"Dataset version `{row['dataset_version']}`. Published copy for analysts: "
        f"`{published}`. This run's other artifacts hold its results "
        "(`run-summary` links them all: leaderboard, position curve, cost, failures); the QA "
        "review batches are on the qa stage's run; `lilo failures` lists what failed.",
    ]
    try:
        publish(
            Artifact("run-record", f"Run {row['status']}", markdown="\n".join(lines)), own_run=True
        )
    except Exception as exc:  # the run's record is in the warehouse already
        log.warning("the run's artifact was not created: %s", exc)
