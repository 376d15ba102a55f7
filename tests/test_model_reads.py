"""Each SQL model of warehouse/models/ declares what it reads (`-- reads: a, b`, its first
line), the views are made in the order computed from those declarations, and every
declaration holds: DuckDB binds a view or macro when it is created, so a model made beside
only the tables and what it declares fails on any read it left out."""

from __future__ import annotations

import graphlib
import re
from importlib import resources
from importlib.resources.abc import Traversable
from pathlib import Path

import duckdb
import pytest

from lilo.warehouse import Warehouse
from lilo.warehouse.schema import BadModel, model_reads, model_statements

_CREATES = re.compile(r"CREATE OR REPLACE (?:VIEW|MACRO) (\w+)")


def _tables() -> duckdb.DuckDBPyConnection:
    """A fresh in-memory DuckDB with the warehouse's migrations applied and no models."""
    con = duckdb.connect()
    migrations = resources.files("lilo.warehouse") / "migrations"
    for entry in sorted(migrations.iterdir(), key=lambda e: e.name):
        if entry.name.endswith(".sql"):
            con.execute(entry.read_text())
    return con


def undeclared(models: Traversable | None = None) -> list[str]:
    """Each model of `models` whose SQL reads a view or macro its `-- reads:` line leaves
    out, or declares one its SQL does not name, as `name: DuckDB's error`."""
    statements = model_statements(models)
    made = {name: sql for sql in statements for name in _CREATES.findall(sql)}
    found = []
    for sql in statements:
        own = _CREATES.findall(sql)[0]
        reads = model_reads(own, sql)
        body = re.sub(r"--[^\n]*", "", sql)
        found += [
            f"{own}: declares {r}, never read" for r in reads if r not in re.findall(r"\w+", body)
        ]
        needed, todo = set(), list(reads)
        while todo:  # what it declares, and what those declare
            name = todo.pop()
            if name not in needed:
                needed.add(name)
                todo += model_reads(name, made[name])
        con = _tables()
        try:
            for other in statements:
                if set(_CREATES.findall(other)) & needed:
                    con.execute(other)
            con.execute(sql)
        except duckdb.CatalogException as error:
            found.append(f"{own}: {str(error).splitlines()[0]}")
        finally:
            con.close()
    return found


def _models(folder: Path, **files: str) -> Path:
    folder.mkdir()
    for name, sql in files.items():
        (folder / f"{name}.sql").write_text(sql)
    return folder


def test_every_model_declares_exactly_what_it_reads():
    statements = model_statements()
    assert len(statements) == 22
    assert undeclared() == []


def test_an_undeclared_read_fails_the_check(tmp_path: Path):
    models = _models(
        tmp_path / "models",
        base="-- reads:\nCREATE OR REPLACE VIEW base AS SELECT 1 AS x;\n",
        top="-- reads:\nCREATE OR REPLACE VIEW top AS SELECT x FROM base;\n",
        extra="-- reads: base, top\nCREATE OR REPLACE VIEW extra AS SELECT x FROM top;\n",
    )
    assert undeclared(models) == [
        "top: Catalog Error: Table with name base does not exist!",
        "extra: declares base, never read",
    ]


def test_a_column_named_like_a_view_makes_no_dependency(tmp_path: Path):
    """The old order, guessed from the words of the SQL, read `cost` and `winrate` here as
    views and raised a cycle for models that read only tables."""
    models = _models(
        tmp_path / "models",
        cost="-- reads:\nCREATE OR REPLACE VIEW cost AS SELECT 1 AS winrate;\n",
        winrate="-- reads:\nCREATE OR REPLACE VIEW winrate AS SELECT 'cost' AS cost;\n",
        pair="-- reads: cost, winrate\n"
        "CREATE OR REPLACE VIEW pair AS SELECT * FROM cost, winrate;\n",
    )
    order = [_CREATES.findall(sql)[0] for sql in model_statements(models)]
    assert order == ["cost", "winrate", "pair"]
    assert undeclared(models) == []


def test_a_missing_or_unknown_declaration_is_a_lilo_error(tmp_path: Path):
    bare = _models(tmp_path / "bare", a="CREATE OR REPLACE VIEW a AS SELECT 1;\n")
    with pytest.raises(BadModel, match=r"a.sql does not open with `-- reads: a, b`"):
        model_statements(bare)
    unknown = _models(
        tmp_path / "unknown", a="-- reads: b\nCREATE OR REPLACE VIEW a AS SELECT 1;\n"
    )
    with pytest.raises(BadModel, match="a.sql reads b, which no model file creates"):
        model_statements(unknown)
    loop = _models(
        tmp_path / "loop",
        a="-- reads: b\nCREATE OR REPLACE VIEW a AS SELECT 1;\n",
        b="-- reads: a\nCREATE OR REPLACE VIEW b AS SELECT 1;\n",
    )
    with pytest.raises(graphlib.CycleError):
        model_statements(loop)


def test_a_fresh_warehouse_gets_every_view(tmp_path: Path):
    with Warehouse(tmp_path / "lilo.duckdb") as wh:
        views = {r["view_name"] for r in wh.rows("SELECT view_name FROM duckdb_views()")}
    assert {"leaderboard", "res_leaderboard", "method_order", "failures", "winrate"} <= views
