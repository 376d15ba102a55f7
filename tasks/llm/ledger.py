"""A run's LLM calls as they complete: an append-only JSON-lines log per run and stage.

The client appends each call the moment it returns (one `write` per line, O_APPEND), so a
run killed mid-stage loses at most the replies in flight; the flow folds the log into the
warehouse (`fct_llm_calls`, `llm_cache`) at each write, and the next start folds what a
killed run left. A line's number in its file is the call's `seq` in the ledger, so folding
the same lines twice adds nothing. Before each request the client also appends its key to
a `.sent` log beside it: a request a killed run sent and got no reply for is still in the
ledger (`replied` false), so the ledger counts every request the endpoint received.
"""

from __future__ import annotations

import json
import os
from dataclasses import asdict
from pathlib import Path

from tasks.records import LLMCall

__all__ = ["CallLog", "call_log_path", "read_calls", "read_sent"]


def call_log_path(data_dir: Path, run_id: str, stage: str) -> Path:
    return data_dir / "runs" / run_id / f"{stage}.jsonl"


class CallLog:
    """Appends `LLMCall` records to one file; safe from many threads and processes."""

    def __init__(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self.path = path

    @property
    def sent_path(self) -> Path:
        return self.path.with_suffix(".sent")

    def append(self, call: LLMCall) -> None:
        _append(self.path, asdict(call))

    def sent(self, key: str, backend: str, model: str, purpose: str) -> None:
        """A request about to go out (a reply, when it comes, is appended as a call)."""
        _append(
            self.sent_path, {"key": key, "backend": backend, "model": model, "purpose": purpose}
        )

    def remove(self) -> None:
        self.path.unlink(missing_ok=True)
        self.sent_path.unlink(missing_ok=True)


def _append(path: Path, record: dict[str, object]) -> None:
    line = (json.dumps(record, ensure_ascii=False) + "\n").encode()
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        os.write(fd, line)
    finally:
        os.close(fd)


def read_sent(path: Path) -> list[dict[str, str]]:
    """The requests a `.sent` log holds, whole lines only."""
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return []
    return [json.loads(line) for line in data[: data.rfind(b"\n") + 1].splitlines()]


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
