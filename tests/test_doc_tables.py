"""The docs' tables of methods, scores, settings and views are the code's
(`python -m lilo.flows.doc_tables`): a new plug-in or setting without a rewrite fails here."""

from __future__ import annotations

from pathlib import Path

from lilo.flows import doc_tables

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
