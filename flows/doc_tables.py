"""The docs' tables of what the code registers, generated from it: the methods (with their
variants and parameters), the leaderboard scores, every setting (its default and role) and
the analyst views. A table sits in a Markdown file between `<!-- table: NAME -->` and
`<!-- end table -->`; `python -m lilo.flows.doc_tables` rewrites them in docs/*.md,
`--check` only says which are stale (tests/test_doc_tables.py runs it). A new plug-in file
shows up in them at the next rewrite (docs/contributing.md).
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from lilo.tasks.config import (
    EmbeddingSettings,
    GenerateSettings,
    LLMSettings,
    Settings,
    walk_fields,
)
from lilo.tasks.methods import available_methods, get_method
from lilo.tasks.scoring import leaderboard_scores
from lilo.warehouse.schema import model_statements

__all__ = ["TABLES", "main", "render"]

_BLOCK = re.compile(r"(<!-- table: ([a-z]+) -->\n)(.*?)(<!-- end table -->)", re.S)
_CREATES = re.compile(r"CREATE\s+OR\s+REPLACE\s+(VIEW|MACRO)\s+(\w+)", re.I)


def _code(value: Any) -> str:
    text = value if isinstance(value, str) else json.dumps(value, default=str)
    return f"`{text}`".replace("|", "\\|") if text != "" else '`""`'


def _table(header: list[str], rows: list[list[str]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    return "\n".join([*lines, *("| " + " | ".join(r) + " |" for r in rows)]) + "\n"


def methods_table() -> str:
    """Each registered method: the variants a run can name, its parameters at the defaults."""
    defaults = GenerateSettings(), LLMSettings(), EmbeddingSettings()  # not this environment's
    names = available_methods()
    rows = []
    for name in (n for n in names if "[" not in n):
        variants = [n for n in names if n.startswith(f"{name}[")]
        args = get_method(name, *defaults).args
        parameters = ", ".join(f"{k}={_code(v)}" for k, v in sorted(args.items()))
        rows.append([f"`{name}`", ", ".join(f"`{v}`" for v in variants) or "-", parameters])
    return _table(["method", "variants", "parameters (defaults)"], rows)


def scores_table() -> str:
    """The leaderboard's scores in their column order."""
    rows = [
        [f"`{h.name}`", h.label, f"`{h.column}`, `overall_{h.column}`", h.about]
        for h in leaderboard_scores()
    ]
    return _table(["scorer", "label", "leaderboard columns", "what it measures"], rows)


def settings_table() -> str:
    """Every setting: its dotted name (`--set NAME=VALUE`), default and role."""
    defaults = Settings.model_construct()
    rows = []
    for name, role in walk_fields(Settings):
        value = defaults.value_at(name)
        shown = "(secret)" if role.value == "secret" else _code(_plain(value))
        rows.append([f"`{name}`", shown, role.value])
    return _table(["setting", "default", "role"], rows)


def views_table() -> str:
    """The analyst views and macros of warehouse/models/, by name."""
    found = sorted(
        {(n, kind.lower()) for sql in model_statements() for kind, n in _CREATES.findall(sql)}
    )
    return _table(["name", "kind"], [[f"`{n}`", kind] for n, kind in found])


def _plain(value: Any) -> Any:
    if isinstance(value, Path):
        return str(value)
    if isinstance(value, tuple):
        return list(value)
    return value


TABLES: dict[str, Callable[[], str]] = {
    "methods": methods_table,
    "scores": scores_table,
    "settings": settings_table,
    "views": views_table,
}


def render(text: str) -> str:
    """`text` with each table block holding the table the code gives now."""

    def fill(match: re.Match[str]) -> str:
        name = match.group(2)
        if name not in TABLES:
            raise ValueError(f"no table {name!r}: known are {', '.join(TABLES)}")
        return f"{match.group(1)}{TABLES[name]()}{match.group(4)}"

    return _BLOCK.sub(fill, text)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m lilo.flows.doc_tables", description=__doc__)
    parser.add_argument("docs", nargs="?", default="docs", help="the folder of Markdown files")
    parser.add_argument("--check", action="store_true", help="change nothing; exit 1 if stale")
    args = parser.parse_args(argv)
    stale = []
    for path in sorted(Path(args.docs).glob("*.md")):
        text = path.read_text(encoding="utf-8")
        fresh = render(text)
        if fresh != text:
            stale.append(path)
            if not args.check:
                path.write_text(fresh, encoding="utf-8")
    verb = "stale (run python -m lilo.flows.doc_tables)" if args.check else "rewritten"
    for path in stale:
        print(f"{path}: tables {verb}")
    return 1 if stale and args.check else 0


if __name__ == "__main__":
    sys.exit(main())
