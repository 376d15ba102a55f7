"""A progress bar on a terminal, nothing elsewhere."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import TypeVar

T = TypeVar("T")

__all__ = ["progress"]


def progress(items: Sequence[T], description: str) -> Iterable[T]:
    """`items` with a progress bar on stderr while it is a terminal; as they are otherwise
    (nothing in pipes, logs and tests)."""
    from rich.console import Console
    from rich.progress import track

    console = Console(stderr=True)
    if not console.is_terminal:
        return items
    return track(items, description=description, console=console, transient=True)
