"""The warehouse's schema: the migrations (warehouse/migrations/, each applied once, in name
order) and the analyst views and shared macros (warehouse/models/, made again when their SQL
changes)."""

from __future__ import annotations

import graphlib
import hashlib
import re
from collections.abc import Sequence
from importlib import resources
from importlib.resources.abc import Traversable
from pathlib import Path

import duckdb

from lilo.tasks.errors import InputError

__all__ = [
    "BadModel",
    "NewerWarehouse",
    "ScoreColumn",
    "migrate",
    "model_reads",
    "model_statements",
    "recorded_scores",
]

# A leaderboard score as the views lay it out: its name in the score rows (`length`) and its
# column (`s_l`). The flows hand them in from the scorers (tasks/scoring/); the file records
# the ones its views were made with (`schema_scores`), so the warehouse needs no registry.
ScoreColumn = tuple[str, str]

# A model file's statements: `CREATE OR REPLACE VIEW|MACRO name`; its first line declares the
# views and macros of other model files it reads: `-- reads: a, b` (empty when none).
_CREATES = re.compile(r"CREATE\s+OR\s+REPLACE\s+(?:VIEW|MACRO)\s+(\w+)", re.I)
_READS = re.compile(r"-- reads:([^\n]*)")

# Files this process has migrated, with the scores their views were made with: a flow opens
# the file for each short write, and its schema changes only by migrations, which this
# process's code applied when it first opened it.
_MIGRATED: dict[str, tuple[ScoreColumn, ...]] = {}


class NewerWarehouse(InputError):
    """The warehouse holds migrations this code does not know: a newer lilo made it."""


class BadModel(InputError):
    """A SQL model file's `-- reads:` declaration is missing or names no model."""


def model_statements(
    models: Traversable | None = None, scores: Sequence[ScoreColumn] = ()
) -> list[str]:
    """The SQL model files of `models` (warehouse/models/ by default), each file's text with
    the columns of `scores` written in, in the order they can be created: a file comes after
    every file whose view or macro its `-- reads:` line names. Raises BadModel for a missing
    or unknown declaration and graphlib.CycleError for models that read each other."""
    models = models or resources.files(__package__) / "models"
    texts = {e.name: e.read_text() for e in models.iterdir() if e.name.endswith(".sql")}
    columns = _score_columns(scores)
    texts = {name: sql.replace("{score_columns}", columns) for name, sql in texts.items()}
    made = {name: file for file, sql in texts.items() for name in _CREATES.findall(sql)}
    graph = {}
    for file, sql in sorted(texts.items()):
        reads = model_reads(file, sql)
        if unknown := sorted(set(reads) - made.keys()):
            raise BadModel(
                f"{file} reads {', '.join(unknown)}, which no model file creates: "
                "fix its `-- reads:` line"
            )
        graph[file] = sorted({made[name] for name in reads} - {file})
    sorter = graphlib.TopologicalSorter(graph)
    sorter.prepare()  # raises graphlib.CycleError naming the models that read each other
    order: list[str] = []
    while sorter.is_active():
        ready = sorted(sorter.get_ready())
        order += ready
        sorter.done(*ready)
    return [texts[file] for file in order]


def model_reads(file: str, sql: str) -> list[str]:
    """The views and macros the model file `file` declares it reads (its first line)."""
    first = sql.split("\n", 1)[0]
    declared = _READS.fullmatch(first)
    if declared is None:
        raise BadModel(
            f"{file} does not open with `-- reads: a, b` (the views and macros "
            "of other model files it reads; empty when none): add that line"
        )
    return [name.strip() for name in declared.group(1).split(",") if name.strip()]


def _score_columns(scores: Sequence[ScoreColumn]) -> str:
    """`res_leaderboard`'s columns of `scores`, in their order: each one's mean and interval,
    then each one's Overall and its interval (none but a placeholder when there are none)."""

    def pick(field: str, score: str) -> str:
        name = score.replace("'", "''")
        return f"any_value(s.{field}) FILTER (WHERE s.score = '{name}')"

    def col(name: str) -> str:
        return '"' + name.replace('"', '""') + '"'

    columns = [
        f"{pick(field, name)} AS {col(column + suffix)}"
        for name, column in scores
        for field, suffix in (("value", ""), ("low", "_low"), ("high", "_high"))
    ]
    columns += [f"{pick('overall', name)} AS {col('overall_' + column)}" for name, column in scores]
    columns += [
        f"{pick(f'overall{suffix}', name)} AS {col('overall_' + column + suffix)}"
        for name, column in scores
        for suffix in ("_low", "_high")
    ]
    # The SELECT lists the keys first: with no scores it ends at them (no trailing comma).
    return ",\n        ".join(columns)  # none: the SELECT ends in a comma, which DuckDB takes


def recorded_scores(con: duckdb.DuckDBPyConnection) -> tuple[ScoreColumn, ...]:
    """The leaderboard scores the file's views were made with (`schema_scores`), in order."""
    rows = con.execute("SELECT score, column_name FROM schema_scores ORDER BY position")
    return tuple((str(name), str(column)) for name, column in rows.fetchall())


def migrate(
    con: duckdb.DuckDBPyConnection,
    path: Path,
    *,
    fresh: bool,
    scores: Sequence[ScoreColumn] | None = None,
) -> tuple[ScoreColumn, ...]:
    """Apply the migrations `path` lacks and remake the views if their SQL changed, with the
    leaderboard `scores` handed in (recorded in the file) or else those the file records,
    once per process, file and scores (again for a `fresh` file); returns the scores the
    views have. Closes `con` and raises NewerWarehouse when the file holds migrations this
    lilo does not know."""
    key = str(path.resolve())
    wanted = None if scores is None else tuple((str(n), str(c)) for n, c in scores)
    if not fresh and key in _MIGRATED and wanted in (None, _MIGRATED[key]):
        return _MIGRATED[key]
    con.execute(
        "CREATE TABLE IF NOT EXISTS schema_migrations "
        "(version VARCHAR PRIMARY KEY, applied_at TIMESTAMP DEFAULT now())"
    )
    done = {r[0] for r in con.execute("SELECT version FROM schema_migrations").fetchall()}
    migrations = resources.files(__package__) / "migrations"
    entries = sorted(
        (e for e in migrations.iterdir() if e.name.endswith(".sql")), key=lambda e: e.name
    )
    newer = sorted(done - {e.name for e in entries})
    if newer:
        con.close()
        raise NewerWarehouse(
            f"{path} was migrated by a newer lilo (schema {', '.join(newer)}; this "
            f"lilo knows up to {entries[-1].name}): open it with that lilo, or upgrade "
            "this one"
        )
    for entry in entries:
        if entry.name not in done:
            _atomically(
                con,
                (entry.read_text(), None),
                ("INSERT INTO schema_migrations (version) VALUES (?)", [entry.name]),
            )
    # The views are made again only when their SQL changed: a flow opens the file for
    # each short write, and remaking them costs more than the write.
    con.execute(
        "CREATE TABLE IF NOT EXISTS schema_scores "
        "(position INTEGER PRIMARY KEY, score VARCHAR, column_name VARCHAR)"
    )
    recorded = recorded_scores(con)
    scores = recorded if wanted is None else wanted
    sql = model_statements(scores=scores)
    digest = hashlib.sha256("\n".join(sql).encode()).hexdigest()
    con.execute("CREATE TABLE IF NOT EXISTS schema_models (sha256 VARCHAR)")
    if con.execute("SELECT max(sha256) FROM schema_models").fetchall()[0][0] != digest:
        _atomically(
            con,
            *((statement, None) for statement in sql),
            ("DELETE FROM schema_models", None),
            ("INSERT INTO schema_models VALUES (?)", [digest]),
        )
    if scores != recorded:
        _atomically(
            con,
            ("DELETE FROM schema_scores", None),
            *(
                ("INSERT INTO schema_scores VALUES (?, ?, ?)", [i, name, column])
                for i, (name, column) in enumerate(scores)
            ),
        )
    _MIGRATED[key] = scores
    return scores


def _atomically(
    con: duckdb.DuckDBPyConnection, *statements: tuple[str, list[object] | None]
) -> None:
    """The statements (a file's text may hold several) all or none."""
    con.execute("BEGIN TRANSACTION")
    try:
        for sql, params in statements:
            if params is None:
                con.execute(sql)
            else:
                con.execute(sql, params)
    except BaseException:
        con.execute("ROLLBACK")
        raise
    con.execute("COMMIT")
