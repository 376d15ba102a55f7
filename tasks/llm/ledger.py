"""A run's LLM calls as they complete: an append-only JSON-lines log per run and stage,
its reading, and the rows it becomes in the ledger (`fct_llm_calls`) and the cache table
(`llm_cache`): `LedgerReader` is what a stage calls.

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
from collections import Counter
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from lilo.tasks.records import LLMCall

__all__ = [
    "CallLog",
    "LedgerReader",
    "LedgerRows",
    "call_log_path",
    "read_calls",
    "read_sent",
]


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


def read_calls(path: Path, start: int = 0, most: int | None = None) -> tuple[list[LLMCall], int]:
    """The calls from byte `start` on (the whole lines in the next `most` bytes, or the one
    line that starts there when it is longer), and the byte to read from next time: a
    writer folds a growing log in steps without reading it again from the top, nor all of
    it at once. A last line cut short by a kill is left for later (or for good)."""
    try:
        with path.open("rb") as handle:
            handle.seek(start)
            data = handle.read(-1 if most is None else most)
            if most is not None and len(data) == most and b"\n" not in data:
                data += handle.readline()  # a line longer than `most`: that line alone
    except FileNotFoundError:
        return [], start
    whole = data.rfind(b"\n") + 1  # what follows the last newline is not a whole line yet
    calls = []
    for line in data[:whole].splitlines():
        record = json.loads(line)
        record["request"] = record["request"] or ""  # logs written before: null when cached
        calls.append(LLMCall(**record))
    return calls, start + whole


@dataclass
class LedgerRows:
    """What a step of a call log adds: its `fct_llm_calls` rows (without the run id), those
    of the requests that got no reply (the final step's), the `llm_cache` rows of its new
    responses, and the calls and tokens it counts."""

    ledger: list[dict[str, Any]] = field(default_factory=list)
    unanswered: list[dict[str, Any]] = field(default_factory=list)
    cache: list[dict[str, Any]] = field(default_factory=list)
    made: int = 0
    cached: int = 0
    tokens_in: int = 0
    tokens_out: int = 0
    log_bytes: int = 0  # of the call log read (the replies' text in it)
    cost: float = 0.0  # of the priced calls made
    unpriced: set[str] = field(default_factory=set)  # "backend:model" of calls without a price

    def extend(self, more: LedgerRows) -> None:
        """Add the rows and counts of a later step."""
        self.log_bytes += more.log_bytes
        self.ledger += more.ledger
        self.unanswered += more.unanswered
        self.cache += more.cache
        self.made += more.made
        self.cached += more.cached
        self.tokens_in += more.tokens_in
        self.tokens_out += more.tokens_out
        self.cost += more.cost
        self.unpriced |= more.unpriced


class LedgerReader:
    """A stage's call log read in steps, each step's calls numbered on from the last (a
    call's `seq` is its rank in the stage, as in its log). The final step also adds the
    requests of the `.sent` log that got no reply (in flight at a kill, or failed after
    the backend's retries), after the stage's calls and with `replied` false: the endpoint
    received them."""

    def __init__(self, path: Path, stage: str) -> None:
        self.log = CallLog(path)
        self.stage = stage
        self._read_to = 0
        self._seq = 0
        self._answered: Counter[str] = Counter()  # replies read so far, by key

    def read(self, *, final: bool = False, most: int | None = None) -> LedgerRows:
        """The next step: the calls in the next `most` bytes of the log (all of it when
        None; the final step always reads all)."""
        start = self._read_to
        calls, self._read_to = read_calls(self.log.path, start, None if final else most)
        fresh = [c for c in calls if not c.cached]
        self._answered.update(c.key for c in fresh)
        rows = LedgerRows(
            ledger=[
                {
                    "stage": self.stage,
                    "seq": self._seq + n,
                    "key": c.key,
                    "backend": c.backend,
                    "model": c.model,
                    "purpose": c.purpose,
                    "cached": c.cached,
                    "tokens_in": c.tokens_in,
                    "tokens_out": c.tokens_out,
                    "latency_s": c.latency_s,
                    "finish_reason": c.finish_reason or None,
                    "redacted": c.redacted,
                    "cost": c.cost,
                    "batched": c.batched,
                }
                for n, c in enumerate(calls)
            ],
            # `request` is already JSON text: the table stores it as such.
            cache=[
                {
                    "key": c.key,
                    "backend": c.backend,
                    "model": c.model,
                    "purpose": c.purpose,
                    "request": c.request,
                    "response": c.response,
                    "tokens_in": c.tokens_in,
                    "tokens_out": c.tokens_out,
                    "latency_s": c.latency_s,
                    "finish_reason": c.finish_reason or None,
                    "redacted": c.redacted,
                }
                for c in fresh
            ],
            made=len(fresh),
            cached=len(calls) - len(fresh),
            tokens_in=sum(c.tokens_in for c in fresh),
            tokens_out=sum(c.tokens_out for c in fresh),
            log_bytes=self._read_to - start,
            cost=sum(c.cost or 0.0 for c in fresh),
            unpriced={f"{c.backend}:{c.model}" for c in fresh if c.cost is None},
        )
        self._seq += len(calls)
        if final:
            unanswered = self._unanswered()
            rows.unanswered = [
                {"stage": self.stage, "seq": self._seq + n, "key": r["key"],
                 "backend": r["backend"], "model": r["model"], "purpose": r["purpose"],
                 "cached": False, "replied": False}
                for n, r in enumerate(unanswered)
            ]  # fmt: skip
            rows.made += len(unanswered)
            self._seq += len(unanswered)
        return rows

    def _unanswered(self) -> list[dict[str, str]]:
        """The `.sent` log's requests beyond the replies read (matched by key and count)."""
        answered = self._answered.copy()
        unanswered = []
        for r in read_sent(self.log.sent_path):
            if answered[r["key"]] > 0:
                answered[r["key"]] -= 1
            else:
                unanswered.append(r)
        return unanswered
