"""Running the pipeline from a command, and printing what the run did."""

from __future__ import annotations

import shlex
import sys
from pathlib import Path
from typing import Any

from lilo.flows.cli._prefect import running_flows
from lilo.tasks.config import Settings
from lilo.tasks.config_loading import flow_parameters

__all__ = ["print_leaderboard", "print_summary", "run_pipeline_flow"]


def run_pipeline_flow(settings: Settings, dataset: bool, debug: bool) -> dict[str, Any]:
    """Run the pipeline flow (or, with `dataset`, the run on an existing dataset version),
    after a quick look at the endpoints it needs: an unreachable one fails here at once,
    before Prefect starts (the flow checks again, for deployment runs)."""
    from lilo.flows._preflight import check_endpoints

    check_endpoints(settings, arxiv=not dataset)
    from lilo.flows.pipeline import lilo_pipeline, lilo_run_dataset  # while the server starts

    with running_flows(debug):
        if dataset:
            return lilo_run_dataset(settings.dataset_version, overrides=flow_parameters(settings))
        return lilo_pipeline(overrides=flow_parameters(settings))


def print_leaderboard(published: Path) -> bool:
    """The default leaderboard as the paper's Table 2 (flows/cli/leaderboard.py); False,
    printing nothing, when nothing is published."""
    from lilo.flows.cli.leaderboard import print_published

    return print_published(published)


def print_summary(result: dict[str, Any], seconds: float) -> None:
    from rich.console import Console
    from rich.table import Table

    console = Console()
    stages = Table(title=f"Run {result['run_id']} ({result['status']}, {seconds:.1f} s)")
    for column in ("stage", "seconds", "LLM calls made", "served from cache", "rows added"):
        stages.add_column(column, justify="left" if column == "stage" else "right")
    for s in result["stages"]:
        stages.add_row(
            s["stage"],
            f"{s['seconds']:.1f}",
            str(s["llm_made"]),
            str(s["llm_cached"]),
            str(sum(s["rows_added"].values())),
        )
    console.print(stages)
    published = Path(result["published_path"])
    has_results = print_leaderboard(published)
    if not has_results:
        console.print("No results published yet: runs publish once summaries are scored.")
    made, cached = result["llm_calls_made"], result["llm_calls_cached"]
    added = sum(result["rows_added"].values())
    if made == 0 and added == 0:
        console.print(
            f"Nothing new: 0 LLM calls made ({cached} served from cache), "
            "no rows added except this run's record."
        )
    else:
        console.print(f"{made} LLM calls made, {cached} served from cache; {added} rows added.")
    console.print(f"Warehouse (written by runs): {Path(result['db_path']).resolve()}")
    if has_results:
        console.print(
            f"Published copy for analysts (read-only, safe during runs): {published.resolve()}"
        )
        from lilo.warehouse.queries.results import query_program

        program = query_program(published.resolve())
        hint = f"{shlex.quote(sys.executable)} -c {shlex.quote(program)}"
        console.print("Query it:", soft_wrap=True)
        console.print("  " + hint, soft_wrap=True, markup=False)
    _print_review_hint(console, result)


def _print_review_hint(console: Any, result: dict[str, Any]) -> None:
    """How many QA pairs wait for a reviewer, and the command that reviews them
    (docs/design.md §6)."""
    from lilo.flows.qa_review import pending_count

    db_path = Path(result["db_path"])
    waiting = pending_count(db_path, result["dataset_version"])
    if waiting:
        pairs = "1 QA pair waits" if waiting == 1 else f"{waiting} QA pairs wait"
        console.print(
            f"{pairs} for review; review them with: "
            f"lilo review --data-dir {db_path.parent.resolve()}",
            soft_wrap=True,
            markup=False,
        )
    elif result["review_mode"] == "manual":
        console.print("No QA pairs wait for review.")
