"""Versioned probe results (docs/design.md §17), as the leaderboard's are
(warehouse/results.py): the current answers (`fct_probe_answers`, one per item x setting x
position x prompt form x backbone, the newest replacing an older one) are frozen into a
new `res_probe_answers` version when they differ from the latest version's; otherwise the
latest version stays current. A version holding failed answers is `partial`, as a leaderboard
version with cells missing is. Versions are never changed."""

from __future__ import annotations

from dataclasses import dataclass

from lilo.warehouse.db import Warehouse

__all__ = ["ProbeVersion", "materialize_probes"]

_COLUMNS = (
    "answer_id, item_id, task, probe_set, variant, size, setting, position, query_aware, "
    "prompts, backbone, correct, error, echo"
)


@dataclass(frozen=True)
class ProbeVersion:
    version: int
    created: bool
    n_answers: int
    partial: bool = False


def materialize_probes(wh: Warehouse, run_id: str) -> ProbeVersion | None:
    """The version holding the current answers; None while there are none."""
    n, content, failed = wh.con.execute(
        "SELECT count(*), md5(coalesce(string_agg(answer_id || '|' || coalesce(correct::VARCHAR, "
        "'') || '|' || error || coalesce('|' || echo::VARCHAR, ''), ',' ORDER BY answer_id), "
        "'')), count(*) FILTER (WHERE error <> '') FROM fct_probe_answers"
    ).fetchall()[0]
    if not n:
        return None
    partial = bool(failed)
    latest = wh.con.execute(
        "SELECT version, content_hash FROM res_probe_versions ORDER BY version DESC LIMIT 1"
    ).fetchall()
    if latest and latest[0][1] == content:
        return ProbeVersion(int(latest[0][0]), False, int(n), partial)
    version = int(wh.scalar("SELECT coalesce(max(version), 0) + 1 FROM res_probe_versions"))
    with wh.transaction():
        wh.con.execute(
            f"INSERT INTO res_probe_answers (version, {_COLUMNS}) "
            f"SELECT ?, {_COLUMNS} FROM fct_probe_answers",
            [version],
        )
        wh.con.execute(
            "INSERT INTO res_probe_versions (version, created_at, run_id, content_hash, "
            "n_answers, partial) VALUES (?, now(), ?, ?, ?, ?)",
            [version, run_id, content, n, partial],
        )
    return ProbeVersion(version, True, int(n), partial)
