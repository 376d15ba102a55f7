"""What a run killed before its end left, taken in by the next start: its `runs` row
marked `crashed` (or with the status its note kept), and its call logs folded into the
ledger (docs/design.md §10)."""

from __future__ import annotations

import os
import socket
from pathlib import Path

from lilo.flows._run_note import note_path, read_note
from lilo.flows._stage import StageReport, log
from lilo.tasks.files import pid_alive
from lilo.tasks.llm.ledger import LedgerReader
from lilo.warehouse import Warehouse
from lilo.warehouse.queries.runs import mark_run, recount_calls, running_runs

__all__ = ["fold_call_logs", "mark_crashed"]


def mark_crashed(wh: Warehouse, run_id: str) -> int:
    """Mark `crashed` the `running` rows of this machine whose process is gone (killed, or
    the machine restarted), and those from before runs recorded their process; returns how
    many. A row from another machine is left alone: its process cannot be seen from here."""
    host = socket.gethostname()
    gone = [
        r
        for r, pid, h in running_runs(wh)
        if r != run_id
        and (pid is None or (h == host and pid != os.getpid() and not pid_alive(pid)))
    ]
    data_dir = Path(wh.path).parent
    for gone_id in gone:
        path = note_path(data_dir, gone_id)
        note = read_note(path)
        stages = sorted({p.stem for p in (data_dir / "runs" / gone_id).glob("*.sent")})
        during = f" during {', '.join(stages)}" if stages else ""
        status, message = note or (
            "crashed",
            f"its process was gone when run {run_id} started: killed or crashed{during}",
        )
        mark_run(wh, gone_id, status, message)
        if note:
            log.warning("run %s ended %s: %s", gone_id, status, message)
        else:
            log.warning("run %s was killed or crashed: marked crashed", gone_id)
        path.unlink(missing_ok=True)
    return len(gone)


def fold_call_logs(wh: Warehouse, data_dir: Path) -> tuple[int, int]:
    """Fold the call logs that killed or stopped runs left (those of runs no longer
    `running`) into the ledger and the cache table, then remove them; returns (the ledger
    rows added, the calls the logs held). Lines the run itself folded add nothing again
    (same run, stage and seq). A
    request in the run's `.sent` log with no reply in its call log was in flight at the kill
    or the stop: it goes into the ledger with `replied` false, after the stage's calls. Each
    such run's record then counts the calls and tokens its ledger rows add up to."""
    running = {r[0] for r in running_runs(wh)}
    before, seen = wh.count("fct_llm_calls"), 0
    logs = {p.with_suffix("") for p in (data_dir / "runs").glob("*/*.jsonl")}
    logs |= {p.with_suffix("") for p in (data_dir / "runs").glob("*/*.sent")}
    for stem in sorted(logs):
        run_id, stage_name = stem.parent.name, stem.name
        if run_id in running:
            continue
        ledger = LedgerReader(stem.with_suffix(".jsonl"), stage_name)
        calls = ledger.read(final=True)
        with wh.transaction():
            StageReport(stage=stage_name, run_id=run_id).save_calls(wh, calls)
            recount_calls(wh, run_id)
        seen += len(calls.ledger) + len(calls.unanswered)
        ledger.log.remove()
        if not any(stem.parent.iterdir()):
            stem.parent.rmdir()
    return wh.count("fct_llm_calls") - before, seen
