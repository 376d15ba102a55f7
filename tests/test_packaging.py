"""lilo installs under one import name: the repository's folders (flows/, tasks/,
warehouse/, expectations/) are the packages lilo.flows, lilo.tasks, lilo.warehouse and
lilo.expectations, so that no other package (nor a user's own `tasks.py`) can clash with them."""

from __future__ import annotations

import re
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
FOLDERS = ("flows", "tasks", "warehouse", "expectations")


def test_every_folder_with_code_is_an_installed_package():
    declared = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    folders = {
        ".".join(("lilo", *path.relative_to(ROOT).parts))
        for top in FOLDERS
        for path in [ROOT / top, *(ROOT / top).rglob("*")]
        if path.is_dir() and any(path.glob("*.py"))
    }
    assert sorted(declared["packages"]) == sorted(folders)
    assert declared["package-dir"] == {f"lilo.{top}": top for top in FOLDERS}


def test_no_module_imports_the_folders_by_their_bare_names():
    """Import statements, and code held in strings (`python -c ...` in a subprocess): from the
    repository's root a bare `tasks` still imports, as a second copy of lilo's modules."""
    bare = re.compile(rf"\b(?:from|import) (?:{'|'.join(FOLDERS)})\b")
    found = [
        f"{path.relative_to(ROOT)}:{n} {line.strip()}"
        for top in (*FOLDERS, "bench", "tests")
        for path in (ROOT / top).rglob("*.py")
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if bare.search(line) and "from lilo import" not in line
    ]
    assert found == []


@pytest.mark.e2e  # `lilo`'s command modules loaded in a subprocess
@pytest.mark.slow
def test_the_command_loads_only_lilo_names(tmp_path):
    """From a folder other than the repository (where the folders are not on sys.path)."""
    code = (
        "import sys, lilo.flows.cli, lilo.flows.pipeline; "
        f"print(sorted({{m.split('.')[0] for m in sys.modules}} & {set(FOLDERS)!r}))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, check=True
    )
    assert out.stdout.strip() == "[]"


def test_the_installed_command_freezes_what_is_left_before_the_exit(monkeypatch, capsys):
    """The installed `lilo` script is `console_main`: `main()`, then the heap frozen, so the
    interpreter's exit does not walk it again (bench/command_exit.py)."""
    import gc
    from importlib.metadata import entry_points

    from lilo.flows.cli import console_main

    (script,) = entry_points(group="console_scripts", name="lilo")
    assert script.value == "lilo.flows.cli:console_main"
    monkeypatch.setattr(sys, "argv", ["lilo", "--help"])
    assert gc.get_freeze_count() == 0  # nothing else in this process freezes
    try:
        assert console_main() == 0
        assert gc.get_freeze_count() > 0
    finally:
        gc.unfreeze()  # this test process goes on collecting as before
    assert "usage: lilo" in capsys.readouterr().out
