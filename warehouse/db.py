"""The one DuckDB writer: a connection (migrated on open: warehouse/schema.py), transactions,
idempotent column-wise upserts, and reads.

Only flows write, through this module. Rows go in as one Arrow table per call (docs/design.md §10;
executemany is far slower) inside a transaction, keyed by content,
so a rerun adds nothing and a crash loses nothing that was already written.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import asdict, is_dataclass
from pathlib import Path
from typing import Any

import duckdb
import pandas as pd
import pyarrow as pa

from lilo.warehouse.schema import ScoreColumn, migrate

__all__ = ["Warehouse", "quote"]

# The JSON columns of each file's tables: its schema changes only by migrations, which this
# process's code applied when it first opened it.
_JSON_COLUMNS: dict[tuple[str, str], set[str]] = {}


def quote(name: str) -> str:
    """`name` (a table or column) as a quoted SQL identifier: DuckDB takes no parameter for a
    name, and a quoted one may hold any character."""
    return '"' + name.replace('"', '""') + '"'


def _changed(result: duckdb.DuckDBPyConnection) -> int:
    """The rows an INSERT, UPDATE or DELETE changed, as DuckDB's statement reports them."""
    rows = result.fetchall()  # drained: an undrained result holds the connection
    return int(rows[0][0]) if rows else 0


class Warehouse:
    """The file at `path`, migrated; its views' leaderboard columns are those of `scores`
    (name, column), handed in by the flows from the scorers, else those the file records."""

    def __init__(self, path: Path, scores: Sequence[ScoreColumn] | None = None) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self.path = path
        fresh = not path.exists()
        self.con = duckdb.connect(str(path))
        self._in_transaction = False
        self.scores = migrate(self.con, path, fresh=fresh, scores=scores)

    def close(self) -> None:
        self.con.close()

    def __enter__(self) -> Warehouse:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def tables(self) -> list[str]:
        rows = self.con.execute(
            "SELECT table_name FROM information_schema.tables "
            "WHERE table_type = 'BASE TABLE' AND table_schema = 'main' ORDER BY 1"
        ).fetchall()
        return [r[0] for r in rows]

    def count(self, table: str) -> int:
        return int(self.scalar(f"SELECT count(*) FROM {quote(table)}"))

    def counts(self) -> dict[str, int]:
        return {t: self.count(t) for t in self.tables()}

    def _json_cols(self, table: str) -> set[str]:
        key = (str(self.path.resolve()), table)
        if key not in _JSON_COLUMNS:
            rows = self.con.execute(
                "SELECT column_name FROM information_schema.columns "
                "WHERE table_name = ? AND data_type = 'JSON'",
                [table],
            ).fetchall()
            _JSON_COLUMNS[key] = {r[0] for r in rows}
        return _JSON_COLUMNS[key]

    # -- writing ------------------------------------------------------------------------
    @contextmanager
    def transaction(self) -> Iterator[None]:
        """All or nothing. Nested blocks join the outermost one, so several upserts can be
        made atomic together."""
        if self._in_transaction:
            yield
            return
        self.con.execute("BEGIN TRANSACTION")
        self._in_transaction = True
        try:
            yield
        except BaseException:
            self.con.execute("ROLLBACK")
            raise
        else:
            self.con.execute("COMMIT")
        finally:
            self._in_transaction = False

    def upsert(
        self,
        table: str,
        records: Iterable[Any],
        key: tuple[str, ...],
        *,
        update: bool = False,
        extra: dict[str, Any] | None = None,
        raw_json: bool = False,
    ) -> int:
        """Insert records (dataclasses or dicts) keyed by `key`; returns rows added.

        Existing keys are left alone, or overwritten with `update=True` (for rows whose state
        changes, like quarantine reasons). `extra` adds constant columns (e.g. run_id).
        `raw_json=True`: string values of JSON columns are already JSON text.
        """
        rows = self._prepare(table, records, extra or {}, raw_json)
        if not rows:
            return 0
        unique = {tuple(r[k] for k in key): r for r in rows}  # one row per key per statement
        incoming = pa.Table.from_pylist(list(unique.values()))
        columns = incoming.column_names
        names = ", ".join(quote(c) for c in columns)
        if update:
            assignments = ", ".join(
                f"{quote(c)} = excluded.{quote(c)}" for c in columns if c not in key
            )
            keys = ", ".join(quote(k) for k in key)
            conflict = f"ON CONFLICT ({keys}) DO UPDATE SET {assignments}"
        else:
            conflict = "ON CONFLICT DO NOTHING"
        self.con.register("_incoming", incoming)
        try:
            with self.transaction():
                # DuckDB counts an overwritten row as changed: those keys were there before.
                present = (
                    int(
                        self.scalar(
                            f"SELECT count(*) FROM _incoming JOIN {quote(table)} USING ({keys})"
                        )
                    )
                    if update
                    else 0
                )
                changed = _changed(
                    self.con.execute(
                        f"INSERT INTO {quote(table)} ({names}) "
                        f"SELECT {names} FROM _incoming {conflict}"
                    )
                )
        finally:
            self.con.unregister("_incoming")
        return changed - present

    def delete(self, table: str, column: str, values: Iterable[Any], **equal: Any) -> int:
        """Delete the rows whose `column` is one of `values` (and whose other columns equal
        `equal`); returns rows removed."""
        values = list(values)
        if not values:
            return 0
        conditions = [f"list_contains(?, {quote(column)})", *(f"{quote(c)} = ?" for c in equal)]
        with self.transaction():
            return _changed(
                self.con.execute(
                    f"DELETE FROM {quote(table)} WHERE {' AND '.join(conditions)}",
                    [values, *equal.values()],
                )
            )

    def clear_quarantine(self, stage: str, item_ids: Iterable[str]) -> int:
        """Delete the quarantine rows of `item_ids` at `stage` (items that got through on a
        later run); returns rows removed."""
        return self.delete("quarantine", "item_id", item_ids, stage=stage)

    def _prepare(
        self, table: str, records: Iterable[Any], extra: dict[str, Any], raw_json: bool
    ) -> list[dict[str, Any]]:
        json_cols = self._json_cols(table)
        rows = []
        for record in records:
            instance = is_dataclass(record) and not isinstance(record, type)
            row = asdict(record) if instance else dict(record)
            row.update(extra)
            for column, value in row.items():
                if column in json_cols and not (raw_json and isinstance(value, str)):
                    row[column] = json.dumps(value, ensure_ascii=False, default=str)
                elif isinstance(value, tuple):
                    row[column] = list(value)
            rows.append(row)
        return rows

    # -- reading ------------------------------------------------------------------------
    def df(self, query: str, params: list[Any] | None = None) -> pd.DataFrame:
        return self.con.execute(query, params or []).df()

    def scalar(self, query: str, params: list[Any] | None = None) -> Any:
        """The first value of the first row. Uses fetchall(): in DuckDB 2.x an undrained
        result holds the connection (docs/design.md §10)."""
        result = self.con.execute(query, params or []).fetchall()
        return result[0][0] if result else None

    def rows(self, query: str, params: list[Any] | None = None) -> list[dict[str, Any]]:
        cursor = self.con.execute(query, params or [])
        names = [d[0] for d in cursor.description]
        return [dict(zip(names, r, strict=True)) for r in cursor.fetchall()]
