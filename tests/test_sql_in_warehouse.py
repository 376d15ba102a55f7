"""All SQL lives in warehouse/: flows and tasks call its queries by name (docs/design.md).

The scan reads the files' text, so a statement written anywhere else makes it fail: every
string literal that reads as SQL, and every call that hands a query to DuckDB
(`.execute(`, `.sql(`, `wh.rows(` ...), outside `warehouse/`.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("flows", "tasks", "expectations")

# Statements as lilo writes them: upper-case keywords (prompt text such as "ADD/DELETE"
# headings has no FROM, INTO or SET after them).
_SQL = re.compile(
    r"\bSELECT\b[\s\S]+?\bFROM\b|\bINSERT\s+INTO\b|\bUPDATE\s+\w+\s+SET\b|\bDELETE\s+FROM\b"
    r"|\bCREATE\s+(?:OR\s+REPLACE\s+)?(?:TEMP\s+)?(?:TABLE|VIEW|MACRO)\b|\bCOPY\s*\(|\bATTACH\b"
)
# A query handed to DuckDB: a connection's or warehouse's execute/sql, or the warehouse's
# readers.
_RUNS_QUERY = {"execute", "executemany", "sql", "query", "rows", "scalar", "df"}


def _docstrings(tree: ast.AST) -> set[int]:
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            body = node.body
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
                found.add(id(body[0].value))
    return found


def sql_outside_warehouse(root: Path = ROOT) -> list[str]:
    """`path:line: what` for each SQL string literal and each query call outside warehouse/."""
    hits = []
    for package in PACKAGES:
        for path in sorted((root / package).rglob("*.py")):
            tree = ast.parse(path.read_text(), str(path))
            docstrings = _docstrings(tree)
            where = path.relative_to(root)
            for node in ast.walk(tree):
                if (
                    isinstance(node, ast.Constant)
                    and isinstance(node.value, str)
                    and id(node) not in docstrings
                    and _SQL.search(node.value)
                ):
                    hits.append(f"{where}:{node.lineno}: SQL text {node.value[:40]!r}")
                elif (
                    isinstance(node, ast.Call)
                    and isinstance(node.func, ast.Attribute)
                    and node.func.attr in _RUNS_QUERY
                    and _reads_warehouse(node.func.value)
                ):
                    hits.append(f"{where}:{node.lineno}: query call .{node.func.attr}(")
    return sorted(hits, key=lambda h: (h.split(":")[0], int(h.split(":")[1])))


def _reads_warehouse(target: ast.expr) -> bool:
    """`con.execute`, `wh.con.execute`, `wh.rows`, `duckdb.connect(...).sql`: a receiver
    named like a connection or a warehouse, or a connect() call."""
    if isinstance(target, ast.Call):
        func = target.func
        return isinstance(func, ast.Attribute) and func.attr == "connect"
    name = target.attr if isinstance(target, ast.Attribute) else getattr(target, "id", "")
    return name in {"con", "wh", "warehouse", "duckdb", "connection", "cursor"}


def test_no_sql_outside_warehouse() -> None:
    hits = sql_outside_warehouse()
    assert hits == [], (
        f"{len(hits)} SQL statements or query calls outside warehouse/: "
        "move them into warehouse/queries/\n" + "\n".join(hits)
    )


def test_the_scan_finds_sql(tmp_path: Path) -> None:
    """The scan sees a statement and a query call, and passes prompt text that is not SQL."""
    (tmp_path / "flows").mkdir()
    (tmp_path / "flows" / "x.py").write_text(
        'def f(wh):\n    """SELECT a FROM b in a docstring is prose."""\n'
        '    wh.con.execute("UPDATE runs SET state = ?", ["x"])\n'
        "    return wh.rows(QUERY)\n"
        'PROMPT = "ADD: <heading>\\nDELETE: <heading>"\n'
    )
    hits = sql_outside_warehouse(tmp_path)
    assert [h.split(": ", 1)[0] for h in hits] == ["flows/x.py:3", "flows/x.py:3", "flows/x.py:4"]
