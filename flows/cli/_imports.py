"""What every `lilo import` prints at its end, whatever it imported."""

from __future__ import annotations

from typing import Any

__all__ = ["print_import_outcome"]


def print_import_outcome(result: Any) -> None:
    """What every `lilo import` ends with: its problems (one line each), notes and the rows
    it added (none on a second import)."""
    from lilo.tasks.printable import printable

    where = " (one line each; also in the quarantine table)" if result.problems else ""
    print(f"  problems: {len(result.problems)}{where}")
    for line in result.problems:  # they name files of the clone and quote them
        print(f"    {printable(line, one_line=True)}")
    for note in result.notes:
        print(f"  note: {printable(note, one_line=True)}")
    added = sum(result.rows_added.values())
    if added:
        tables = ", ".join(f"{t} {n}" for t, n in sorted(result.rows_added.items()))
        print(f"  rows added: {added} ({tables})")
    else:
        print("  rows added: 0: nothing new (this run's record aside)")
