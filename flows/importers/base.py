"""A dataset importer as a plug-in (lilo's one plug-in shape, tasks/registry.py): one module
of this package registers an `Importer` with `importer(Importer(...), __name__)`, saying
what `lilo import <name> PATH` reads, its options, the early check of PATH, the flow that
reads (with a pure reader of tasks/, records and a line per problem) and writes, and what
it prints. `lilo import` lists the registered importers; none of its code names one."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from lilo.tasks.config import Settings
from lilo.tasks.errors import LiloError
from lilo.tasks.printable import printable
from lilo.tasks.registry import Registry

__all__ = [
    "ImportOutcome",
    "Importer",
    "NothingImported",
    "Option",
    "available_importers",
    "get_importer",
    "importer",
    "print_import_outcome",
]


class ImportOutcome(Protocol):
    """What every import flow returns, beside its own counts: a line per problem (naming
    its file), notes, the rows it added by table (none on a second import) and its run."""

    problems: list[str]
    notes: list[str]
    rows_added: dict[str, int]
    run_id: str


class NothingImported(LiloError):
    """An import that wrote nothing, saying why (a dataset version's name is taken): one
    line, exit 1."""

    complete = True


@dataclass(frozen=True)
class Option:
    """An option of `lilo import <name>` beyond the common ones: `--<name>` with a default,
    handed to the importer's functions by name."""

    name: str
    default: str
    metavar: str
    help: str


@dataclass(frozen=True)
class Importer:
    """One importer. `reads` names PATH in the help (`CLONE`) and `reads_help` says what it
    is; `check(path, options)` refuses a PATH that holds nothing to read (an `InputError`,
    before any flow starts: a typo costs nothing); `run(path, settings, options)` runs the
    import flow; `report(outcome, path)` prints what it imported (its counts, then
    `print_import_outcome`, then the next command) and gives the exit status: 0 when
    something was imported, 1 when nothing could be."""

    name: str
    title: str
    description: str
    reads: str
    reads_help: str
    check: Callable[[Path, Mapping[str, str]], object]
    run: Callable[[Path, Settings, Mapping[str, str]], Any]
    report: Callable[[Any, Path], int]
    options: tuple[Option, ...] = ()


_IMPORTERS: Registry[Importer] = Registry(
    "importer",
    __package__,
    "add flows/importers/{name}.py that calls importer(Importer({name!r}, ...), __name__)",
)


def importer(entry: Importer, origin: str) -> Importer:
    """Register `entry` from module `origin` (pass `__name__`)."""
    _IMPORTERS.add(entry.name, entry, origin)
    return entry


def get_importer(name: str) -> Importer:
    """The registered importer; `UnknownName` listing the known ones otherwise."""
    return _IMPORTERS.get(name)


def available_importers() -> list[str]:
    return _IMPORTERS.names()


def print_import_outcome(outcome: ImportOutcome) -> None:
    """What every `lilo import` prints after its counts: its problems (one line each), notes
    and the rows it added (none on a second import)."""
    where = " (one line each; also in the quarantine table)" if outcome.problems else ""
    print(f"  problems: {len(outcome.problems)}{where}")
    for line in outcome.problems:  # they name files of the clone and quote them
        print(f"    {printable(line, one_line=True)}")
    for note in outcome.notes:
        print(f"  note: {printable(note, one_line=True)}")
    added = sum(outcome.rows_added.values())
    if added:
        tables = ", ".join(f"{t} {n}" for t, n in sorted(outcome.rows_added.items()))
        print(f"  rows added: {added} ({tables})")
    else:
        print("  rows added: 0: nothing new (this run's record aside)")
