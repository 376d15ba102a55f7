"""The docs' tables of methods, scores, settings and views are the code's
(`python -m lilo.flows.doc_tables`): a new plug-in or setting without a rewrite fails here;
the hand-written tables, which explain settings and views, name only real ones."""

from __future__ import annotations

import re
from pathlib import Path

from lilo.flows import doc_tables
from lilo.tasks.config import Settings, walk_fields
from lilo.warehouse.db import Warehouse

DOCS = Path(__file__).resolve().parent.parent / "docs"


def test_the_generated_tables_are_current(capsys):
    assert doc_tables.main([str(DOCS), "--check"]) == 0, capsys.readouterr().out


def test_a_stale_table_is_named_and_rewritten(tmp_path, capsys):
    page = tmp_path / "page.md"
    page.write_text("Scores:\n\n<!-- table: scores -->\n| old |\n<!-- end table -->\n")
    assert doc_tables.main([str(tmp_path), "--check"]) == 1
    assert "page.md: tables stale (run python -m lilo.flows.doc_tables)" in capsys.readouterr().out
    assert doc_tables.main([str(tmp_path)]) == 0
    assert "| `quality` | S_q | `s_q`, `overall_s_q` |" in page.read_text()
    assert "| old |" not in page.read_text()


def _table_settings() -> list[tuple[str, str]]:
    """(document, name) of each dotted setting named in the first cell of a docs table."""
    sections = {n.split(".")[0] for n, _ in walk_fields(Settings) if "." in n}
    found = []
    for path in [*sorted(DOCS.glob("*.md")), DOCS.parent / "README.md"]:
        for line in path.read_text(encoding="utf-8").splitlines():
            if line.startswith("| "):
                for name in re.findall(r"`([a-z_]+(?:\.[a-z_0-9]+)+)`", line.split("|")[1]):
                    if name.split(".")[0] in sections:
                        found.append((path.name, name))
    return found


def test_the_hand_written_tables_name_real_settings_and_views(tmp_path):
    settings = {n for n, _ in walk_fields(Settings)}
    named = _table_settings()
    assert len(named) > 50  # the tables of docs/operations.md and docs/reference.md
    assert [(doc, n) for doc, n in named if n not in settings] == []
    with Warehouse(tmp_path / "lilo.duckdb") as wh:
        views = {r[0] for r in wh.con.execute("SELECT view_name FROM duckdb_views()").fetchall()}
    analysts = (DOCS / "analysts.md").read_text(encoding="utf-8")
    documented = re.findall(r"^### `(\w+)` \(view\)", analysts, re.M)
    assert len(documented) > 10 and sorted(set(documented) - views) == []
