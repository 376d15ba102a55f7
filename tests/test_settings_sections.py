"""Functions in tasks/ take the settings section they read (`CleanSettings`, `ArxivSettings`,
the offline engine's `OfflineSettings`, ...), not the whole `Settings`: the count of those
that still take the whole object only goes down. Lower `WHOLE` when you convert one."""

from __future__ import annotations

import ast
from pathlib import Path

TASKS = Path(__file__).resolve().parent.parent / "tasks"
# Functions in tasks/ (outside the settings' own modules) with a parameter annotated
# `Settings`: 71 before sections were passed, 37 before a method read its own.
WHOLE = 28


def _taking_whole_settings() -> list[str]:
    found = []
    for path in sorted(TASKS.rglob("*.py")):
        if path.stem in ("config", "config_loading"):  # where the whole object is made
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                params = [*node.args.posonlyargs, *node.args.args, *node.args.kwonlyargs]
                names = [ast.unparse(p.annotation) for p in params if p.annotation is not None]
                if any(name.strip("'\"") == "Settings" for name in names):
                    found.append(f"{path.relative_to(TASKS.parent)}:{node.name}")
    return found


def test_tasks_take_the_section_they_read():
    found = _taking_whole_settings()
    assert len(found) <= WHOLE, (
        f"{len(found)} functions in tasks/ take the whole Settings (at most {WHOLE}): pass the "
        "section a new function reads instead of the whole object:\n" + "\n".join(found)
    )
