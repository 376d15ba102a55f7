"""The `runs` table: runs still marked running, what failed in a run, and marking how a
run ended."""

from __future__ import annotations

from lilo.warehouse.queries._read import Source, _con, tuples

__all__ = ["mark_run", "run_failures", "running_runs"]


def running_runs(source: Source) -> list[tuple[str, int | None, str | None]]:
    """(run_id, pid, host) of every run marked `running`."""
    return tuples(source, "SELECT run_id, pid, host FROM runs WHERE status = 'running'")


def mark_run(source: Source, run_id: str, status: str, message: str) -> None:
    """Set a run's status and message (a run whose process is gone)."""
    _con(source).execute(
        "UPDATE runs SET status = ?, message = ? WHERE run_id = ?", [status, message, run_id]
    )


def run_failures(source: Source, run_id: str) -> tuple[int, str | None, list[tuple[str, int]]]:
    """A run's failed generations, the first of their errors, and its quarantined
    `llm_error`/`judge_unusable` units as (reason, count)."""
    generations, first = tuples(
        source,
        "SELECT count(*), min(error) FROM fct_generations WHERE run_id = ? AND error <> ''",
        [run_id],
    )[0]
    held = tuples(
        source,
        "SELECT reason, count(*) FROM quarantine WHERE run_id = ? "
        "AND reason IN ('llm_error', 'judge_unusable') GROUP BY ALL ORDER BY ALL",
        [run_id],
    )
    return generations, first, held
