"""The quarantine: items a stage could not take, with why."""

from __future__ import annotations

from lilo.warehouse.queries._read import Source, tuples

__all__ = ["fetch_failures", "quarantined", "quarantined_under"]


def quarantined(source: Source, stage: str) -> set[tuple[str, str]]:
    """(item_id, reason) of the stage's quarantine rows."""
    return set(tuples(source, "SELECT item_id, reason FROM quarantine WHERE stage = ?", [stage]))


def quarantined_under(source: Source, stage: str, prefix: str) -> list[str]:
    """Ids of the stage's quarantined items whose id starts with `prefix`."""
    return [
        r[0]
        for r in tuples(
            source,
            "SELECT item_id FROM quarantine WHERE stage = ? AND starts_with(item_id, ?)",
            [stage, prefix],
        )
    ]


def fetch_failures(source: Source, item_ids: list[str]) -> dict[str, str]:
    """Item id -> "reason: detail" of the fetch stage's quarantine rows for `item_ids`."""
    return dict(
        tuples(
            source,
            "SELECT item_id, reason || ': ' || detail FROM quarantine "
            "WHERE stage = 'fetch' AND list_contains(?, item_id)",
            [item_ids],
        )
    )
