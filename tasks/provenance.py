"""What made a result: the code version recorded on every run and generation."""

from __future__ import annotations

import functools
import subprocess
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

__all__ = ["code_version"]


@functools.cache
def code_version() -> str:
    """`<package version>+<git commit>[.dirty]`, or the package version outside a checkout."""
    try:
        base = version("lilo")
    except PackageNotFoundError:
        base = "0+unknown"
    root = Path(__file__).resolve().parent.parent
    try:
        sha = _git(root, "rev-parse", "--short=12", "HEAD")
        dirty = _git(root, "status", "--porcelain", "--untracked-files=no")
    except (OSError, subprocess.SubprocessError):
        return base
    return f"{base}+{sha}{'.dirty' if dirty else ''}"


def _git(root: Path, *args: str) -> str:
    done = subprocess.run(
        ["git", "-C", str(root), *args], capture_output=True, text=True, timeout=5, check=True
    )
    return done.stdout.strip()
