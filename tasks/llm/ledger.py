"""A run's LLM calls as they complete: an append-only JSON-lines log per run and stage.

The client appends each call the moment it returns (one `write` per line, O_APPEND), so a
run killed mid-stage loses at most the calls in flight; the flow folds the log into the
warehouse (`fct_llm_calls`, `llm_cache`) at each write, and the next start folds what a
killed run left. A line's number in its file is the call's `seq` in the ledger, so folding
the same lines twice adds nothing.
"""

from __future__ import annotations

import json
import os
from dataclasses import asdict
from pathlib import Path

from tasks.records import LLMCall

__all__ = ["CallLog", "call_log_path", "read_calls"]


def call_log_path(data_dir: Path, run_id: str, stage: str) -> Path:
    return data_dir / "runs" / run_id / f"{stage}.jsonl"


class CallLog:
    """Appends `LLMCall` records to one file; safe from many threads and processes."""

    def __init__(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self.path = path

    def append(self, call: LLMCall) -> None:
        line = (json.dumps(asdict(call), ensure_ascii=False) + "\n").encode()
        fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        try:
            os.write(fd, line)
        finally:
            os.close(fd)


def read_calls(path: Path, start: int = 0) -> tuple[list[LLMCall], int]:
    """The calls from byte `start` on, and the byte to read from next time: a writer folds
    a growing log in steps without reading it again from the top. A last line cut short by
    a kill is left for later (or for good)."""
    try:
        with path.open("rb") as handle:
            handle.seek(start)
            data = handle.read()
    except FileNotFoundError:
        return [], start
    whole = data.rfind(b"\n") + 1  # what follows the last newline is not a whole line yet
    calls = []
    for line in data[:whole].splitlines():
        record = json.loads(line)
        record["request"] = record["request"] or ""  # logs written before: null when cached
        calls.append(LLMCall(**record))
    return calls, start + whole
