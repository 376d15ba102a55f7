"""The LLM call ledger (`fct_llm_calls`) and what generations cost."""

from __future__ import annotations

import pandas as pd

from lilo.warehouse.queries._read import Source, frame, tuples

__all__ = ["generation_history", "judge_cost", "run_calls"]


def generation_history(source: Source, backbone: str) -> pd.DataFrame:
    """Per method and length, what a successful generation on `backbone` took on average
    (LLM calls, tokens in, tokens out)."""
    return frame(
        source,
        "SELECT method, target_words, avg(llm_calls) AS calls, avg(tokens_in) AS tokens_in, "
        "avg(tokens_out) AS tokens_out FROM fct_generations "
        "WHERE error = '' AND backbone = ? GROUP BY ALL",
        [backbone],
    )


def judge_cost(source: Source) -> tuple[int, int | None, int | None, int]:
    """The score stage's calls, tokens in and tokens out, and the generations scored."""
    return tuples(
        source,
        "SELECT count(*), sum(tokens_in), sum(tokens_out), "
        "(SELECT count(DISTINCT generation_id) FROM fct_scores) "
        "FROM fct_llm_calls WHERE stage = 'score'",
    )[0]


def run_calls(source: Source, run_id: str) -> tuple[int, int, int, int]:
    """A run's calls made and served from cache, and the tokens in and out it made."""
    return tuples(
        source,
        "SELECT count(*) FILTER (WHERE NOT cached), count(*) FILTER (WHERE cached), "
        "coalesce(sum(tokens_in) FILTER (WHERE NOT cached), 0), "
        "coalesce(sum(tokens_out) FILTER (WHERE NOT cached), 0) "
        "FROM fct_llm_calls WHERE run_id = ?",
        [run_id],
    )[0]
