"""The serving copy analysts read (docs/design.md §10), replaced atomically."""

from __future__ import annotations

from pathlib import Path

from lilo.tasks.files import place, temp_path
from lilo.warehouse.db import Warehouse, quote
from lilo.warehouse.parquet import write_result_parquet
from lilo.warehouse.schema import model_statements

__all__ = ["publish_warehouse"]


def publish_warehouse(wh: Warehouse, published: Path, data_dir: Path) -> Path:
    """Atomically replace the serving copy at `published`, then write the result versions'
    Parquet files next to it.

    A file held read-write by this process cannot be opened by any other, so analysts
    read a copy: ATTACH a temporary file (in `data_dir/tmp`, tasks/files.py), copy each
    table into it, create the models' views and macros (warehouse/models/), DETACH,
    move it into place. A reader that has the old copy open keeps reading it; the next
    open sees the new one. The copy holds what analysts query: `llm_cache` without its
    `request` column (every call's full prompt, the bulk of the file; it stays here and
    in the content-addressed cache), so publishing is neither slow nor the run's memory
    peak.
    """
    tmp = temp_path(data_dir, published.name)
    source = wh.scalar("SELECT current_database()")
    # Paths are parameters and names quoted identifiers: a data dir may hold any character.
    wh.con.execute("ATTACH ? AS lilo_publish", [str(tmp)])
    try:
        try:
            for table in wh.tables():
                columns = "* EXCLUDE (request)" if table == "llm_cache" else "*"
                wh.con.execute(
                    f"CREATE TABLE lilo_publish.main.{quote(table)} AS "
                    f"SELECT {columns} FROM {quote(source)}.main.{quote(table)}"
                )
            wh.con.execute("USE lilo_publish")
            try:
                for statement in model_statements(scores=wh.scores):
                    wh.con.execute(statement)
            finally:
                wh.con.execute(f"USE {quote(source)}")
        finally:
            wh.con.execute("DETACH lilo_publish")
        place(tmp, published, data_dir)
    finally:
        tmp.unlink(missing_ok=True)
        tmp.with_name(tmp.name + ".wal").unlink(missing_ok=True)
    write_result_parquet(wh.con, published.parent / "results", data_dir)
    return published
