"""What failed: the published results' failed units and the samples waiting for review."""

from __future__ import annotations

from lilo.warehouse.queries._read import Source, tuples

__all__ = ["failure_rows"]


def failure_rows(source: Source) -> list[tuple[str, str | None, int | None, str, str]]:
    """(stage, method, target_words, sample_id, reason) of every row of the `failures`
    view."""
    return tuples(source, "SELECT stage, method, target_words, sample_id, reason FROM failures")
