"""The `runs` table: runs still marked running, what failed in a run, marking how a run
ended, and counting its calls again once the ledger holds calls it could not count."""

from __future__ import annotations

from lilo.warehouse.queries._read import Source, _con, tuples

__all__ = ["mark_run", "recount_calls", "run_failures", "running_runs"]


def running_runs(source: Source) -> list[tuple[str, int | None, str | None]]:
    """(run_id, pid, host) of every run marked `running`."""
    return tuples(source, "SELECT run_id, pid, host FROM runs WHERE status = 'running'")


def mark_run(source: Source, run_id: str, status: str, message: str) -> None:
    """Set a run's status and message (a run whose process is gone)."""
    _con(source).execute(
        "UPDATE runs SET status = ?, message = ? WHERE run_id = ?", [status, message, run_id]
    )


def recount_calls(source: Source, run_id: str) -> None:
    """A run's LLM calls and tokens as the `fct_llm_calls` ledger holds them, where it
    holds more than the run counted: calls folded after the run ended (a killed run's, and
    the requests in flight when a run was stopped)."""
    _con(source).execute(
        """
        UPDATE runs SET
            llm_calls_made = greatest(runs.llm_calls_made, l.made),
            llm_calls_cached = greatest(runs.llm_calls_cached, l.cached),
            tokens_in = greatest(runs.tokens_in, l.tokens_in),
            tokens_out = greatest(runs.tokens_out, l.tokens_out)
        FROM (
            SELECT count(*) FILTER (WHERE NOT cached) AS made,
                   count(*) FILTER (WHERE cached) AS cached,
                   coalesce(sum(tokens_in) FILTER (WHERE NOT cached), 0) AS tokens_in,
                   coalesce(sum(tokens_out) FILTER (WHERE NOT cached), 0) AS tokens_out
            FROM fct_llm_calls WHERE run_id = $run
        ) AS l
        WHERE runs.run_id = $run
        """,
        {"run": run_id},
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
