"""Run records that never lie: a killed run is marked `crashed` by the next start,
which also folds its call log into the ledger and removes the temp files it left; a partial
result version does not replace the last complete one as the default leaderboard unless
published on purpose; a writer that finds the file held names who holds it."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time

import duckdb
import pytest

from lilo.flows._run import recorded_run
from lilo.tasks.config import Settings
from lilo.tasks.files import temp_path
from lilo.tasks.llm.ledger import CallLog, call_log_path, read_calls
from lilo.tasks.records import Generation, LLMCall, Sample, ScoreRow
from lilo.warehouse import Warehouse, WarehouseBusy, open_warehouse
from lilo.warehouse.results import Expected, materialize_results


def _dead_pid() -> int:
    process = subprocess.Popen([sys.executable, "-c", "pass"])
    process.wait()
    return process.pid


def test_next_start_marks_killed_runs_crashed_folds_their_calls_and_removes_temp_files(
    tmp_path,
):
    settings = Settings(data_dir=tmp_path)
    dead = _dead_pid()
    with Warehouse(settings.db_path) as wh:
        killed = {"run_id": "killed", "flow": "f", "started_at": "2026-01-01", "status": "running",
                  "config_hash": "h", "code_version": "c", "backbone": "b",
                  "dataset_version": "v1", "review_mode": "auto", "target_words": [1],
                  "settings": {}, "pid": dead, "host": socket.gethostname()}  # fmt: skip
        wh.upsert("runs", [killed], ("run_id",))
    log = CallLog(call_log_path(tmp_path, "killed", "generate"))
    for n in range(4):  # k0, k1 answered; k2 twice in flight, k3 once, at the kill
        log.sent(f"k{min(n, 2)}", "openai", "m", "p")
    log.sent("k3", "openai", "m", "q")
    for n in range(2):
        log.append(LLMCall(f"k{n}", "openai", "m", "p", 1, 2, 0.1, False, "{}", "reply"))
    with open(log.path, "ab") as handle:
        handle.write(b'{"key": "cut sh')  # the line a kill interrupted
    # A stage killed before its first reply leaves only what it sent.
    CallLog(call_log_path(tmp_path, "killed", "score")).sent("s0", "openai", "m", "grade")
    temp = temp_path(tmp_path, "lilo.duckdb")
    temp = temp.with_name(temp.name.replace(f"-{os.getpid()}-", f"-{dead}-"))  # a killed one's
    temp.write_bytes(b"half a copy")

    with recorded_run(settings, "next") as run:
        assert settings.published_path.exists()  # a copy for analysts from the start

    assert not temp.exists() and not log.path.exists() and not log.sent_path.exists()
    assert not (tmp_path / "runs" / "killed").exists()
    with Warehouse(settings.db_path) as wh:
        statuses = dict(wh.con.execute("SELECT run_id, status FROM runs").fetchall())
        assert statuses == {"killed": "crashed", run.run_id: "completed"}
        ledger = wh.rows(
            "SELECT stage, key, seq, cached, replied, purpose, tokens_in FROM fct_llm_calls "
            "ORDER BY stage, seq"
        )
        # Every request the endpoint received: 2 replies, 3 in flight at the kill.
        assert [tuple(r.values()) for r in ledger] == [
            ("generate", "k0", 0, False, True, "p", 1),
            ("generate", "k1", 1, False, True, "p", 1),
            ("generate", "k2", 2, False, False, "p", None),
            ("generate", "k2", 3, False, False, "p", None),
            ("generate", "k3", 4, False, False, "q", None),
            ("score", "s0", 0, False, False, "grade", None),
        ]
        assert wh.count("llm_cache") == 2  # no reply, nothing to cache


def test_a_growing_call_log_is_read_in_steps_from_where_the_last_read_stopped(tmp_path):
    log = CallLog(call_log_path(tmp_path, "r", "score"))
    call = LLMCall("k0", "openai", "m", "p", 1, 2, 0.1, False, '{"a":1}', "reply")
    log.append(call)
    with open(log.path, "ab") as handle:
        handle.write(b'{"key": "k1", "back')  # a line being written
    calls, offset = read_calls(log.path)
    assert calls == [call] and offset == log.path.read_bytes().index(b"\n") + 1
    assert read_calls(log.path, offset) == ([], offset)  # the cut line waits
    log.path.write_bytes(log.path.read_bytes()[:offset])
    log.append(call)
    assert read_calls(log.path, offset) == ([call], 2 * offset)


def _scores(wh: Warehouse, sample: str, value: float | None) -> None:
    wh.upsert("dim_samples", [Sample(sample, "v1", ("a",), "t", "sv", 10, "command")],
              ("sample_id",), extra={"run_id": "r"})  # fmt: skip
    error = "" if value is not None else "LLMError: down"
    gen = Generation(f"g{sample}", sample, "single", {}, 4000, "offline:m", "text", 1, error=error)
    extra = {"run_id": "r", "config_hash": "h", "code_version": "c"}
    wh.upsert("fct_generations", [gen], ("generation_id",), update=True, extra=extra)
    if value is not None:
        rows = [ScoreRow(gen.generation_id, s, value) for s in ("length", "consistency", "quality")]
        wh.upsert("fct_scores", rows, ("generation_id", "score"), extra={"run_id": "r"})


@pytest.mark.parametrize("publish_partial", [False, True])
def test_a_partial_version_replaces_the_complete_one_only_when_published_on_purpose(
    tmp_path, publish_partial
):
    wh = Warehouse(tmp_path / "w.duckdb")
    _scores(wh, "s1", 50.0)
    complete = materialize_results(
        wh, "v1", "r1", Expected(["s1"], ["single"], [4000], "offline:m")
    )
    _scores(wh, "s2", None)  # the next run's generation failed
    partial = materialize_results(
        wh, "v1", "r2", Expected(["s1", "s2"], ["single"], [4000], "offline:m"),
        publish_partial=publish_partial,
    )  # fmt: skip
    assert complete and partial and partial.partial and partial.version == 2
    shown = wh.rows("SELECT scored, expected FROM leaderboard")
    assert shown == ([{"scored": 1, "expected": 2}] if publish_partial else
                     [{"scored": 1, "expected": 1}])  # fmt: skip
    assert wh.scalar("SELECT count(DISTINCT version) FROM res_leaderboard") == 2


def test_a_writer_waits_for_a_reader_of_the_warehouse_and_names_it(tmp_path):
    path = tmp_path / "w.duckdb"
    Warehouse(path).close()
    reader = subprocess.Popen(
        [sys.executable, "-c",
         f"import duckdb, time; c = duckdb.connect({str(path)!r}, read_only=True); "
         "print('open', flush=True); time.sleep(3)"],
        stdout=subprocess.PIPE, text=True,
    )  # fmt: skip
    assert reader.stdout is not None and reader.stdout.readline() == "open\n"
    with pytest.raises(WarehouseBusy, match=f"read-only connection \\(PID {reader.pid}"):
        open_warehouse(path, 0.2)
    started = time.monotonic()
    with open_warehouse(path, 30) as wh:  # waits for the reader to go, then writes
        assert time.monotonic() - started > 0.5
        wh.con.execute("CREATE TABLE written (x INTEGER)")
    reader.wait()
    assert (
        duckdb.connect(str(path), read_only=True).execute("SELECT 1 FROM written").fetchall() == []
    )


_FULL_DISK_RUN = """
import sys
from pathlib import Path
from lilo.flows._run import recorded_run
from lilo.tasks.config import Settings
from lilo.tasks.files import temp_path
settings = Settings(data_dir=Path(sys.argv[1]))
with recorded_run(settings, "full-disk"):
    with open(Path(sys.argv[1]) / "filler", "wb") as f:  # the disk fills up mid-run
        while True:
            f.write(b"x" * 65536)
"""


@pytest.fixture
def small_disk(tmp_path):
    """A 48 MB file system of its own (tmpfs; needs root, skipped where mounting fails)."""
    mount = tmp_path / "disk"
    mount.mkdir()
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=48m", "tmpfs", str(mount)],
                          capture_output=True)  # fmt: skip
    if done.returncode:
        pytest.skip(f"cannot mount a small file system here: {done.stderr.decode().strip()}")
    try:
        yield mount
    finally:
        subprocess.run(["umount", str(mount)], check=False)


def test_a_run_that_failed_on_a_full_disk_is_recorded_failed_with_why(small_disk):
    data = small_disk / "data"
    done = subprocess.run([sys.executable, "-c", _FULL_DISK_RUN, str(data)],
                          capture_output=True, text=True, timeout=120)  # fmt: skip
    assert done.returncode == 1 and "No space left" in done.stderr, done.stderr
    (data / "filler").unlink()  # the operator makes room

    settings = Settings(data_dir=data)
    with recorded_run(settings, "next") as run:
        pass
    with Warehouse(settings.db_path) as wh:
        rows = wh.rows("SELECT run_id, status, message FROM runs ORDER BY started_at")
    assert [r["status"] for r in rows] == ["failed", "completed"]
    assert rows[1]["run_id"] == run.run_id
    assert "No space left" in rows[0]["message"] and "killed or crashed" not in rows[0]["message"]
    assert "the run's record could not be written" in rows[0]["message"]  # kept in its note
    assert not list((data / "runs").glob("*.status"))
