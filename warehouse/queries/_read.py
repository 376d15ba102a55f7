"""Running a query on a warehouse or on a connection (a read-only one too)."""

from __future__ import annotations

from typing import Any

import duckdb
import pandas as pd

from lilo.warehouse.db import Warehouse

Source = Warehouse | duckdb.DuckDBPyConnection


def _con(source: Source) -> duckdb.DuckDBPyConnection:
    return source.con if isinstance(source, Warehouse) else source


def rows(source: Source, query: str, params: list[Any] | None = None) -> list[dict[str, Any]]:
    cursor = _con(source).execute(query, params or [])
    names = [d[0] for d in cursor.description]
    return [dict(zip(names, r, strict=True)) for r in cursor.fetchall()]


def tuples(source: Source, query: str, params: list[Any] | None = None) -> list[tuple[Any, ...]]:
    return _con(source).execute(query, params or []).fetchall()


def scalar(source: Source, query: str, params: list[Any] | None = None) -> Any:
    found = tuples(source, query, params)
    return found[0][0] if found else None


def frame(
    source: Source, query: str, params: list[Any] | dict[str, Any] | None = None
) -> pd.DataFrame:
    return _con(source).execute(query, params or []).df()
