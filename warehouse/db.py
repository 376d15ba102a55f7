"""The one DuckDB writer: connect + migrate, idempotent column-wise upserts, publishing.

Only flows write, through this module. Rows go in as one Arrow table per call (docs/design.md §10:
~100k rows/s, where executemany is 25-100x slower) inside a transaction, keyed by content,
so a rerun adds nothing and a crash loses nothing that was already written.
"""

from __future__ import annotations

import graphlib
import hashlib
import json
import re
import time
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import asdict, is_dataclass
from importlib import resources
from pathlib import Path
from typing import Any

import duckdb
import pandas as pd
import pyarrow as pa

from lilo.tasks.backoff import WAREHOUSE_LOCK
from lilo.tasks.errors import InputError, Unavailable
from lilo.tasks.files import place, temp_path

__all__ = [
    "NewerWarehouse",
    "Warehouse",
    "WarehouseBusy",
    "model_statements",
    "open_warehouse",
]

# A model file's statements: `CREATE OR REPLACE VIEW|MACRO name`.
_CREATES = re.compile(r"CREATE\s+OR\s+REPLACE\s+(?:VIEW|MACRO)\s+(\w+)", re.I)
_COMMENT = re.compile(r"--[^\n]*")


def model_statements() -> list[str]:
    """The analyst views and shared macros of warehouse/models/, each file's text, in the
    order they can be created: a file comes after every file whose view or macro its SQL
    names (read from the text, so a new model needs no list to be kept)."""
    models = resources.files(__package__) / "models"
    texts = {e.name: e.read_text() for e in models.iterdir() if e.name.endswith(".sql")}
    texts = {name: sql.replace("{score_columns}", _score_columns()) for name, sql in texts.items()}
    made = {name: file for file, sql in texts.items() for name in _CREATES.findall(sql)}
    graph = {}
    for file, sql in sorted(texts.items()):
        words = set(re.findall(r"\w+", _COMMENT.sub("", sql)))
        graph[file] = sorted({made[w] for w in words & made.keys()} - {file})
    sorter = graphlib.TopologicalSorter(graph)
    sorter.prepare()  # raises graphlib.CycleError naming the models that read each other
    order: list[str] = []
    while sorter.is_active():
        ready = sorted(sorter.get_ready())
        order += ready
        sorter.done(*ready)
    return [texts[file] for file in order]


def _score_columns() -> str:
    """`res_leaderboard`'s columns of the leaderboard scores (tasks/scoring/), in their
    order: each one's mean and interval, then each one's Overall and its interval."""
    from lilo.tasks.scoring import leaderboard_scores  # the scorers, found once

    def pick(field: str, score: str) -> str:
        return f"any_value(s.{field}) FILTER (WHERE s.score = '{score}')"

    scores = leaderboard_scores()
    columns = [
        f"{pick(field, h.name)} AS {h.column}{suffix}"
        for h in scores
        for field, suffix in (("value", ""), ("low", "_low"), ("high", "_high"))
    ]
    columns += [f"{pick('overall', h.name)} AS overall_{h.column}" for h in scores]
    columns += [
        f"{pick(f'overall{suffix}', h.name)} AS overall_{h.column}{suffix}"
        for h in scores
        for suffix in ("_low", "_high")
    ]
    return ",\n        ".join(columns)


# Files this process has migrated and the JSON columns of their tables: a flow opens the
# file for each short write, and its schema changes only by migrations, which this
# process's code applied when it first opened it.
_MIGRATED: set[str] = set()
_JSON_COLUMNS: dict[tuple[str, str], set[str]] = {}


class Warehouse:
    def __init__(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self.path = path
        fresh = not path.exists()
        self.con = duckdb.connect(str(path))
        self._in_transaction = False
        if fresh or str(path.resolve()) not in _MIGRATED:
            self._migrate()
            _MIGRATED.add(str(path.resolve()))

    def close(self) -> None:
        self.con.close()

    def __enter__(self) -> Warehouse:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- schema -------------------------------------------------------------------------
    def _migrate(self) -> None:
        self.con.execute(
            "CREATE TABLE IF NOT EXISTS schema_migrations "
            "(version VARCHAR PRIMARY KEY, applied_at TIMESTAMP DEFAULT now())"
        )
        done = {r[0] for r in self.con.execute("SELECT version FROM schema_migrations").fetchall()}
        migrations = resources.files(__package__) / "migrations"
        entries = sorted(
            (e for e in migrations.iterdir() if e.name.endswith(".sql")), key=lambda e: e.name
        )
        newer = sorted(done - {e.name for e in entries})
        if newer:
            self.con.close()
            raise NewerWarehouse(
                f"{self.path} was migrated by a newer lilo (schema {', '.join(newer)}; this "
                f"lilo knows up to {entries[-1].name}): open it with that lilo, or upgrade "
                "this one"
            )
        for entry in entries:
            if entry.name not in done:
                with self.transaction():
                    self.con.execute(entry.read_text())
                    self.con.execute(
                        "INSERT INTO schema_migrations (version) VALUES (?)", [entry.name]
                    )
        # The views are made again only when their SQL changed: a flow opens the file for
        # each short write, and remaking them costs more than the write.
        sql = model_statements()
        digest = hashlib.sha256("\n".join(sql).encode()).hexdigest()
        self.con.execute("CREATE TABLE IF NOT EXISTS schema_models (sha256 VARCHAR)")
        if self.scalar("SELECT max(sha256) FROM schema_models") != digest:
            with self.transaction():
                for statement in sql:
                    self.con.execute(statement)
                self.con.execute("DELETE FROM schema_models")
                self.con.execute("INSERT INTO schema_models VALUES (?)", [digest])

    def tables(self) -> list[str]:
        rows = self.con.execute(
            "SELECT table_name FROM information_schema.tables "
            "WHERE table_type = 'BASE TABLE' AND table_schema = 'main' ORDER BY 1"
        ).fetchall()
        return [r[0] for r in rows]

    def count(self, table: str) -> int:
        return int(self.scalar(f"SELECT count(*) FROM {table}"))

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
        if update:
            assignments = ", ".join(f"{c} = excluded.{c}" for c in columns if c not in key)
            conflict = f"ON CONFLICT ({', '.join(key)}) DO UPDATE SET {assignments}"
        else:
            conflict = "ON CONFLICT DO NOTHING"
        before = self.count(table)
        self.con.register("_incoming", incoming)
        try:
            with self.transaction():
                self.con.execute(
                    f"INSERT INTO {table} ({', '.join(columns)}) "
                    f"SELECT {', '.join(columns)} FROM _incoming {conflict}"
                )
        finally:
            self.con.unregister("_incoming")
        return self.count(table) - before

    def delete(self, table: str, column: str, values: Iterable[Any], **equal: Any) -> int:
        """Delete the rows whose `column` is one of `values` (and whose other columns equal
        `equal`); returns rows removed."""
        values = list(values)
        if not values:
            return 0
        conditions = [f"list_contains(?, {column})", *(f"{c} = ?" for c in equal)]
        before = self.count(table)
        with self.transaction():
            self.con.execute(
                f"DELETE FROM {table} WHERE {' AND '.join(conditions)}",
                [values, *equal.values()],
            )
        return before - self.count(table)

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
            row = asdict(record) if is_dataclass(record) else dict(record)
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

    # -- publishing ---------------------------------------------------------------------
    def publish(self, published: Path, data_dir: Path) -> Path:
        """Atomically replace the serving copy analysts read (docs/design.md §10).

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
        source = self.scalar("SELECT current_database()")
        # Paths are parameters and names quoted identifiers: a data dir may hold any character.
        self.con.execute("ATTACH ? AS lilo_publish", [str(tmp)])
        try:
            try:
                for table in self.tables():
                    columns = "* EXCLUDE (request)" if table == "llm_cache" else "*"
                    self.con.execute(
                        f"CREATE TABLE lilo_publish.main.{_identifier(table)} AS "
                        f"SELECT {columns} FROM {_identifier(source)}.main.{_identifier(table)}"
                    )
                self.con.execute("USE lilo_publish")
                try:
                    for statement in model_statements():
                        self.con.execute(statement)
                finally:
                    self.con.execute(f"USE {_identifier(source)}")
            finally:
                self.con.execute("DETACH lilo_publish")
            place(tmp, published, data_dir)
        finally:
            tmp.unlink(missing_ok=True)
            tmp.with_name(tmp.name + ".wal").unlink(missing_ok=True)
        self._publish_parquet(published.parent / "results", data_dir)
        return published

    def _publish_parquet(self, folder: Path, data_dir: Path) -> None:
        """Each result version as Parquet, written once: the hand-off to other engines."""
        versions = [r[0] for r in self.con.execute("SELECT version FROM res_versions").fetchall()]
        for version in versions:
            target = folder / f"version={version:04d}" / "res_scores.parquet"
            if target.exists():
                continue
            tmp = temp_path(data_dir, target.name)
            try:
                self.con.execute(
                    "COPY (SELECT * FROM res_scores WHERE version = ? ORDER BY ALL) "
                    "TO ? (FORMAT parquet)",
                    [version, str(tmp)],
                )
                place(tmp, target, data_dir)
            finally:
                tmp.unlink(missing_ok=True)


def _identifier(name: str) -> str:
    """`name` as a quoted SQL identifier: DuckDB takes no parameter for a name."""
    return '"' + name.replace('"', '""') + '"'


class NewerWarehouse(InputError):
    """The warehouse holds migrations this code does not know: a newer lilo made it."""


class WarehouseBusy(Unavailable, RuntimeError):
    """Another process held the warehouse file for longer than we were willing to wait."""


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


def open_warehouse(path: Path, wait_s: float) -> Warehouse:
    """The warehouse, waiting up to `wait_s` (backoff `WAREHOUSE_LOCK`: 0.05 s doubling up
    to 2 s) while another process holds the file: DuckDB lets one process open it, so a reviewer's
    `lilo review` and a run's short write transactions take turns instead of failing."""
    deadline = time.monotonic() + wait_s
    attempt = 0
    while True:
        try:
            return Warehouse(path)
        except duckdb.IOException as exc:
            if "Conflicting lock" not in str(exc):
                raise
            if time.monotonic() >= deadline:
                raise WarehouseBusy(
                    f"{path} is held by {_describe_holder(exc)}; waited {wait_s:.0f} s: try "
                    "again when it is released, or raise db_wait_s"
                ) from exc
            time.sleep(min(WAREHOUSE_LOCK.wait_s(attempt), max(0.0, deadline - time.monotonic())))
            attempt += 1
