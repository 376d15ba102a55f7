"""Reading a warehouse file without writing it: the published copy, or the warehouse itself
when no run holds it (docs/design.md §10). Commands that read results open it here: DuckDB
is warehouse/'s alone (tests/test_import_graph.py)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import duckdb

from lilo.warehouse.lock import not_a_warehouse

__all__ = ["Connection", "MissingTable", "read_first", "read_only"]

Connection = duckdb.DuckDBPyConnection

MissingTable: type[Exception] = duckdb.CatalogException
"""What a query raises on a warehouse from before the table it reads."""


@contextmanager
def read_only(path: Path) -> Iterator[Connection]:
    """A read-only connection to the DuckDB file at `path`, closed after."""
    con = duckdb.connect(str(path), read_only=True)
    try:
        yield con
    finally:
        con.close()


@contextmanager
def read_first(*paths: Path) -> Iterator[Connection | None]:
    """A read-only connection to the first of `paths` that exists and no run holds; None
    when none opens. A file that is not DuckDB at all is `NotAWarehouse`."""
    for path in paths:
        if path.exists():
            try:
                con = duckdb.connect(str(path), read_only=True)
            except duckdb.IOException as exc:
                if (refused := not_a_warehouse(path, exc)) is not None:
                    raise refused from exc
                continue
            try:
                yield con
            finally:
                con.close()
            return
    yield None
