"""A run's last word: a small file reserved when the run starts, rewritten in place with
its final status and why when the warehouse refuses them (a full disk cannot refuse it),
and read by the next start (flows/_crash_recovery.py)."""

from __future__ import annotations

import json
from pathlib import Path

__all__ = ["note_path", "read_note", "reserve_note", "write_note"]

# The size reserved for a run's last word.
_NOTE_BYTES = 4096


def note_path(data_dir: Path, run_id: str) -> Path:
    return data_dir / "runs" / f"{run_id}.status"


def reserve_note(path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b" " * _NOTE_BYTES)


def write_note(path: Path, status: str, message: str) -> None:
    note = json.dumps({"status": status, "message": message}).encode()
    with path.open("r+b") as f:  # in place: no new block to allocate
        f.write(note[:_NOTE_BYTES].ljust(_NOTE_BYTES))


def read_note(path: Path) -> tuple[str, str] | None:
    """The status and message a run kept in its note when the warehouse refused them."""
    try:
        note = json.loads(path.read_bytes().strip() or b"null")
    except (OSError, ValueError):
        return None
    return (note["status"], note["message"]) if isinstance(note, dict) else None
