"""Functions in tasks/ and flows/ take the settings section they read (`CleanSettings`,
`ArxivSettings`, the offline engine's `OfflineSettings`, ...), not the whole `Settings`: the
count of those that still take the whole object only goes down. Lower `WHOLE` or
`WHOLE_FLOWS` when you convert one."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
# Functions in tasks/ (outside the settings' own modules) with a parameter annotated
# `Settings`: 71 before sections were passed, 37 before a method read its own, 28 before
# the LLM backend, the embedder, QA generation and the win-rate judge took theirs. Left on
# the whole object: the LLM client and its factories (the `llm` or judge endpoint, the
# runner's budget, every section's secrets, the cache's place); fetching e-prints, reading
# surveys and the figures' cache (a section and folders of the data dir); title search
# (arxiv and samples); the method variants of a sweep (overrides of the whole object).
WHOLE = 14
# The same in flows/: 86 before its leaf helpers took their section. Most that are left
# are flows and stages passing the whole Settings on to the stage they run; 4 came with
# the Batch API's rounds (2), a probe's work (its dry run's too) and the paper's method
# labels (the Table 2 run's overrides), which compose sections.
WHOLE_FLOWS = 87


def _taking_whole_settings(folder: str) -> list[str]:
    found = []
    for path in sorted((ROOT / folder).rglob("*.py")):
        if path.stem in ("config", "config_loading"):  # where the whole object is made
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                params = [*node.args.posonlyargs, *node.args.args, *node.args.kwonlyargs]
                names = [ast.unparse(p.annotation) for p in params if p.annotation is not None]
                if any(name.strip("'\"") == "Settings" for name in names):
                    found.append(f"{path.relative_to(ROOT)}:{node.name}")
    return found


@pytest.mark.parametrize(("folder", "most"), [("tasks", WHOLE), ("flows", WHOLE_FLOWS)])
def test_functions_take_the_section_they_read(folder: str, most: int) -> None:
    found = _taking_whole_settings(folder)
    assert len(found) <= most, (
        f"{len(found)} functions in {folder}/ take the whole Settings (at most {most}): pass "
        "the section a new function reads instead of the whole object:\n" + "\n".join(found)
    )
