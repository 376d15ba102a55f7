"""Probe items and the probe views a run reads back."""

from __future__ import annotations

import json
from typing import Any

from lilo.tasks.probe_records import ProbeItem
from lilo.warehouse.queries._read import Source, rows, tuples

__all__ = ["load_probe_items", "probe_curve_cells", "probe_item_hashes"]


def probe_item_hashes(source: Source, item_ids: list[str]) -> dict[str, str]:
    """Item id -> content hash of the stored probe items among `item_ids`."""
    return dict(
        tuples(
            source,
            "SELECT item_id, sha256 FROM dim_probe_items WHERE list_contains(?, item_id)",
            [item_ids],
        )
    )


def load_probe_items(source: Source, probe_set: str, limit: int) -> list[ProbeItem]:
    """The first `limit` items of `probe_set`, in the set's line order."""
    items = []
    for r in rows(
        source,
        "SELECT * EXCLUDE (run_id) FROM dim_probe_items WHERE probe_set = ? ORDER BY line LIMIT ?",
        [probe_set, limit],
    ):
        context = json.loads(r["context"])
        items.append(
            ProbeItem(
                **{
                    **r,
                    "answers": tuple(r["answers"]),
                    # JSON lists back as tuples (a key-value record), objects as dicts.
                    "context": tuple(tuple(c) if isinstance(c, list) else c for c in context),
                    "gold": json.loads(r["gold"]) if r["gold"] else None,
                }
            )
        )
    return items


def probe_curve_cells(
    source: Source,
    task_name: str,
    variants: list[str],
    sizes: list[int],
    backbone: str,
    query_aware: bool,
    prompts: str,
) -> list[dict[str, Any]]:
    """The `probe_curve` rows of these cells."""
    return rows(
        source,
        "SELECT * FROM probe_curve WHERE task = ? AND list_contains(?, variant) "
        "AND list_contains(?, size) AND backbone = ? AND query_aware = ? AND prompts = ?",
        [task_name, variants, sizes, backbone, query_aware, prompts],
    )
