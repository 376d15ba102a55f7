"""The optional extras (pyproject.toml, docs/operations.md "What the install holds"): a
setting that needs one that is not installed fails before any work, in one line naming it."""

from __future__ import annotations

import importlib.util

from lilo.tasks.errors import InputError

__all__ = ["MissingExtra", "require_extra"]


class MissingExtra(InputError):
    """A setting asks for an optional extra that is not installed."""


def require_extra(module: str, extra: str, wanted_by: str) -> None:
    """Raises MissingExtra unless `module` (a package of the extra `extra`) is importable."""
    if importlib.util.find_spec(module) is None:
        raise MissingExtra(
            f"{wanted_by} needs the `{extra}` extra ({module} is not installed): "
            f"pip install 'lilo[{extra}]' (in a checkout: .venv/bin/pip install -e '.[{extra}]')"
        )
