"""The progress bar, one way for a stage's units (flows/_progress.py) and a command's items
(`progress`): on stderr while it is a terminal, gone when done; nothing in pipes, logs and
tests."""

from __future__ import annotations

import sys
from collections.abc import Iterable, Iterator, Sequence
from typing import TYPE_CHECKING, Any, TypeVar

if TYPE_CHECKING:
    from rich.progress import Progress

__all__ = ["bar", "progress"]

T = TypeVar("T")


def bar(label: str, *columns: Any) -> Progress:
    """A bar labelled `label`, then `columns` (rich's); disabled off a terminal."""
    from rich.console import Console
    from rich.progress import BarColumn, Progress, TextColumn

    return Progress(
        TextColumn(label),
        BarColumn(),
        *columns,
        console=Console(stderr=True),
        disable=not sys.stderr.isatty(),
        transient=True,
    )


def progress(items: Sequence[T], description: str) -> Iterable[T]:
    """`items`, with a bar while they are gone through."""
    if not sys.stderr.isatty():
        return items
    return _tracked(items, description)


def _tracked(items: Sequence[T], description: str) -> Iterator[T]:
    from rich.progress import MofNCompleteColumn, TimeRemainingColumn

    with bar(description, MofNCompleteColumn(), TimeRemainingColumn()) as shown:
        yield from shown.track(items, description=description)
