"""OpenAI's Batch API for calls that can wait (`llm.batch`, `judge.batch`; docs/design.md,
the LLM client section): a stage's requests collected, sent as one batch at half the price,
their replies put in the cache under their keys, where the stage then finds them.

A round runs the stage's units once with a collecting client (`Collector`): a request the
cache does not hold is collected and answered with a placeholder, and a request that holds a
placeholder (it feeds on a reply not yet made) or asks again (`attempt` > 0) is not
collected; the next round collects it once the first is answered. The batch's id is kept in
`<cache>/llm/batches/<hash of its keys>.json` the moment it is created, before any wait, so
a run killed while it waits picks the same batch up and never submits it twice. A batch that
expired, failed or was cancelled, and a request the error file names, is a failure the run
records (`Collector.failed`) and the next run asks again.
"""

from __future__ import annotations

import io
import json
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from lilo.tasks.cache import DiskCache, cache_key
from lilo.tasks.config import Price
from lilo.tasks.files import write_atomic
from lilo.tasks.lifetime import raise_if_stopping
from lilo.tasks.llm.ledger import CallLog
from lilo.tasks.llm.types import LLMError
from lilo.tasks.records import LLMCall
from lilo.tasks.redact import redact_reply

__all__ = [
    "BATCH_FAILED",
    "BATCH_LANDED",
    "BatchFailed",
    "Collector",
    "PLACEHOLDER",
    "Pending",
    "batch_price",
    "run_batch",
]

# What a collected request is answered with in a round: a request holding it feeds on it.
PLACEHOLDER = "[lilo: a batched reply still to come]"
# The requests of this process's batches that got no reply, by key, with why: the stage's
# own pass fails them (`BatchFailed`) rather than sending them alone; cleared per stage.
BATCH_FAILED: dict[str, str] = {}
# The keys this process's batches answered: the stage's own pass finds each in the cache
# and records no second call for it (the batch's is in the ledger).
BATCH_LANDED: set[str] = set()
_FAILED = ("expired", "failed", "cancelled", "cancelling")


class BatchFailed(LLMError):
    """A batched request the batch did not answer: the next run asks it again."""


@dataclass
class Pending:
    """A collected request: its cache key, what `/v1/chat/completions` is sent, the
    request's text (the ledger keeps it) and what it is for."""

    key: str
    body: dict[str, Any]
    blob: str
    purpose: str


@dataclass
class Collector:
    """The requests a round collects."""

    pending: dict[str, Pending] = field(default_factory=dict)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def add(self, request: Pending) -> None:
        with self.lock:
            self.pending.setdefault(request.key, request)

    def take(self) -> list[Pending]:
        with self.lock:
            taken, self.pending = list(self.pending.values()), {}
        return taken


def batch_price(price: Price | None, batch: Price | None) -> Price | None:
    """The batch price: `batch` where set, else half of the endpoint's `price`."""
    if batch is not None:
        return batch
    return None if price is None else Price(input=price.input / 2, output=price.output / 2)


def record_path(cache: DiskCache, keys: list[str]) -> Path:
    """Where the batch of `keys` keeps its id."""
    return cache.root / "batches" / f"{cache_key(json.dumps(sorted(keys)))[:32]}.json"


def run_batch(
    client: Any,
    cache: DiskCache,
    requests: list[Pending],
    *,
    backend: str,
    model: str,
    price: Price | None,
    poll_s: float,
    log: CallLog | None,
    secrets: list[str] = [],  # noqa: B006 (read only)
    on_created: Callable[[str], None] = lambda batch_id: None,
) -> str:
    """Sends `requests` as one batch (or picks up the one already sent for them), waits for
    it, puts each reply in `cache` and each call in `log` (batched, at `price`), and adds
    each request it did not answer to `BATCH_FAILED` with why; the batch's id."""
    path = record_path(cache, [r.key for r in requests])
    record = _read(path)
    if record is None or record.get("status") in _FAILED:
        lines = [
            {"custom_id": r.key, "method": "POST", "url": "/v1/chat/completions", "body": r.body}
            for r in requests
        ]
        data = "".join(json.dumps(line, ensure_ascii=False) + "\n" for line in lines).encode()
        upload = client.files.create(file=("batch.jsonl", io.BytesIO(data)), purpose="batch")
        batch = client.batches.create(
            input_file_id=upload.id, endpoint="/v1/chat/completions", completion_window="24h"
        )
        record = {"batch_id": batch.id, "status": batch.status, "keys": [r.key for r in requests]}
        write_atomic(path, json.dumps(record), cache.data_dir)  # before any wait
        on_created(batch.id)
    batch_id = str(record["batch_id"])
    started = time.monotonic()
    while True:
        batch = client.batches.retrieve(batch_id)
        if batch.status in ("completed", *_FAILED):
            break
        raise_if_stopping()
        time.sleep(poll_s)
    record["status"] = batch.status
    write_atomic(path, json.dumps(record), cache.data_dir)
    waited = time.monotonic() - started
    by_key = {r.key: r for r in requests}
    answered: set[str] = set()
    if batch.status == "completed" and batch.output_file_id:
        for line in _lines(client, batch.output_file_id):
            key = str(line.get("custom_id", ""))
            request = by_key.get(key)
            reply = (line.get("response") or {}).get("body") or {}
            status = (line.get("response") or {}).get("status_code", 200)
            if request is None or status != 200 or not reply.get("choices"):
                continue
            _land(cache, log, request, reply, (backend, model), price, waited, secrets)
            answered.add(key)
            BATCH_LANDED.add(key)
    errors: dict[str, str] = {}
    if batch.status == "completed" and batch.error_file_id:
        for line in _lines(client, batch.error_file_id):
            error = (line.get("response") or {}).get("body", {}).get("error") or line.get("error")
            errors[str(line.get("custom_id", ""))] = str((error or {}).get("message", error))
    for request in requests:
        if request.key not in answered:
            why = errors.get(request.key) or f"batch {batch_id} {batch.status} without its reply"
            BATCH_FAILED[request.key] = f"batch request failed ({why}): the next run asks it again"
    return batch_id


def _read(path: Path) -> dict[str, Any] | None:
    try:
        record = json.loads(path.read_text())
    except (FileNotFoundError, ValueError):
        return None
    return record if isinstance(record, dict) and record.get("batch_id") else None


def _lines(client: Any, file_id: str) -> list[dict[str, Any]]:
    text = client.files.content(file_id).text
    lines = []
    for raw in text.splitlines():
        try:
            line = json.loads(raw)
        except ValueError:
            continue
        if isinstance(line, dict):
            lines.append(line)
    return lines


def _land(
    cache: DiskCache,
    log: CallLog | None,
    request: Pending,
    reply: dict[str, Any],
    endpoint: tuple[str, str],
    price: Price | None,
    waited: float,
    secrets: list[str],
) -> None:
    """One batched reply into the cache, as a reply sent alone is (the configured secrets
    it echoes redacted), and into the ledger."""
    backend, model = endpoint
    choice = reply["choices"][0]
    text = str((choice.get("message") or {}).get("content") or "")
    text, redacted = redact_reply(text, secrets)
    usage = reply.get("usage") or {}
    tokens_in, tokens_out = (
        int(usage.get("prompt_tokens", 0)),
        int(usage.get("completion_tokens", 0)),
    )
    finish = str(choice.get("finish_reason") or "stop")
    entry = {
        "text": text,
        "tokens_in": tokens_in,
        "tokens_out": tokens_out,
        "latency_s": waited,
        "finish_reason": finish,
        "sent_max_tokens": request.body.get("max_tokens"),
        "redacted": redacted,
    }
    cache.put_json(request.key, entry)
    if log is not None:
        log.append(
            LLMCall(
                key=request.key,
                backend=backend,
                model=model,
                purpose=request.purpose,
                tokens_in=tokens_in,
                tokens_out=tokens_out,
                latency_s=round(waited, 6),
                cached=False,
                request=request.blob,
                response=text,
                finish_reason=finish,
                redacted=redacted,
                cost=price.of(tokens_in, tokens_out) if price else None,
                batched=True,
            )
        )
