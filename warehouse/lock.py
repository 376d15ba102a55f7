"""Opening the warehouse file, which one process may hold at a time: waiting while another
holds it, and naming the holder when the wait runs out."""

from __future__ import annotations

import re
import time
from collections.abc import Sequence
from pathlib import Path

import duckdb

from lilo.tasks.backoff import WAREHOUSE_LOCK
from lilo.tasks.errors import InputError, Unavailable
from lilo.warehouse.db import Warehouse
from lilo.warehouse.schema import ScoreColumn

__all__ = ["NotAWarehouse", "WarehouseBusy", "not_a_warehouse", "open_warehouse"]


class WarehouseBusy(Unavailable):
    """Another process held the warehouse file for longer than we were willing to wait."""


class NotAWarehouse(InputError):
    """The warehouse file is not a DuckDB database: lilo neither reads nor writes it."""


def not_a_warehouse(path: Path, exc: duckdb.IOException) -> NotAWarehouse | None:
    """The error to raise when DuckDB's refusal to open `path` says it is no DuckDB file."""
    if "not a valid DuckDB database file" not in str(exc):
        return None
    return NotAWarehouse(
        f"{path} is not a lilo warehouse (not a DuckDB database file), left as it is: move it "
        "away, or pass the --data-dir that holds lilo's lilo.duckdb"
    )


_HOLDER = re.compile(r"Conflicting lock is held in (.*?) \(PID (\d+)\)")


def _describe_holder(exc: duckdb.IOException) -> str:
    """Who holds the file, from DuckDB's lock error: a read-only connection (an analyst who
    opened the warehouse instead of the published copy) or another writer, with its PID and
    command line."""
    message = str(exc)
    found = _HOLDER.search(message)
    if not found:
        return f"another process ({message})"
    pid = int(found.group(2))
    try:
        command = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode().strip()
    except OSError:
        command = found.group(1)
    who = f"PID {pid}: {command[:120]}"
    if "read-only mode" in message:  # DuckDB adds this when the holder only reads
        return (
            f"a read-only connection ({who}), not a lilo run: analysts should open the "
            "published copy (published/lilo.duckdb), never the warehouse"
        )
    return f"another writer ({who}): a lilo run, a `lilo review`, or a read-write connection"


def open_warehouse(
    path: Path, wait_s: float, scores: Sequence[ScoreColumn] | None = None
) -> Warehouse:
    """The warehouse, waiting up to `wait_s` (backoff `WAREHOUSE_LOCK`: 0.05 s doubling up
    to 2 s) while another process holds the file: DuckDB lets one process open it, so a reviewer's
    `lilo review` and a run's short write transactions take turns instead of failing."""
    deadline = time.monotonic() + wait_s
    attempt = 0
    while True:
        try:
            return Warehouse(path, scores)
        except duckdb.IOException as exc:
            if (refused := not_a_warehouse(path, exc)) is not None:
                raise refused from exc
            if "Conflicting lock" not in str(exc):
                raise
            if time.monotonic() >= deadline:
                raise WarehouseBusy(
                    f"{path} is held by {_describe_holder(exc)}; waited {wait_s:.0f} s: try "
                    "again when it is released, or raise db_wait_s"
                ) from exc
            time.sleep(min(WAREHOUSE_LOCK.wait_s(attempt), max(0.0, deadline - time.monotonic())))
            attempt += 1
