"""Every third-party package lilo imports (flows/, tasks/, warehouse/, expectations/) is a
distribution pyproject.toml declares, as a dependency or in an optional extra."""

from __future__ import annotations

import ast
import importlib.metadata
import re
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
FOLDERS = ("flows", "tasks", "warehouse", "expectations")


def _imports() -> dict[str, str]:
    """Top-level module imported -> a file that imports it."""
    found: dict[str, str] = {}
    for package in FOLDERS:
        for path in sorted((ROOT / package).rglob("*.py")):
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                if isinstance(node, ast.Import):
                    names = [a.name for a in node.names]
                elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                    names = [node.module]
                else:
                    continue
                for name in names:
                    found.setdefault(name.split(".")[0], str(path.relative_to(ROOT)))
    return {m: f for m, f in found.items() if m not in sys.stdlib_module_names and m != "lilo"}


def _normal(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def _declared() -> set[str]:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    specs = [*project["dependencies"]]
    for extra in project.get("optional-dependencies", {}).values():
        specs += extra
    return {_normal(re.split(r"[\s\[<>=!~;]", spec, maxsplit=1)[0]) for spec in specs}


def test_every_imported_package_is_declared():
    distributions = importlib.metadata.packages_distributions()
    declared = _declared()
    missing = []
    for module, where in sorted(_imports().items()):
        # A module not installed here (an optional extra) is named as its distribution.
        names = {_normal(d) for d in distributions.get(module, [module])}
        if not names & declared:
            missing.append(f"{module} (imported by {where}; distribution {', '.join(names)})")
    assert missing == []


def test_the_check_sees_lazy_imports():
    assert {"sklearn", "huggingface_hub", "llmlingua"} <= set(_imports())
