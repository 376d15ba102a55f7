"""Run records that never lie: a killed run is marked `crashed` by the next start,
which also folds its call log into the ledger, counts those calls in its record and removes
the temp files it left; a stage stopped by an exception counts in its run's record, which
adds up with the ledger; a stage's progress counts calls as they are logged; a partial
result version does not replace the last complete one as the default leaderboard unless
published on purpose; a writer that finds the file held names who holds it."""

from __future__ import annotations

import contextlib
import io
import json
import logging
import os
import socket
import subprocess
import sys
import time

import duckdb
import pytest

from lilo.flows._progress import StageProgress
from lilo.flows._run import recorded_run
from lilo.flows._stage import timed_stage
from lilo.flows._stage_writer import StageWriter
from lilo.tasks.config import Settings
from lilo.tasks.files import temp_path
from lilo.tasks.llm.ledger import CallLog, call_log_path, read_calls
from lilo.tasks.records import Generation, LLMCall, Quarantine, Sample, ScoreRow
from lilo.tasks.scoring import scored_by
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
        # The killed run's record counts what its ledger rows add up to, and says where.
        made, tokens_in, tokens_out, message = wh.con.execute(
            "SELECT llm_calls_made, tokens_in, tokens_out, message FROM runs "
            "WHERE run_id = 'killed'"
        ).fetchall()[0]
        assert (made, tokens_in, tokens_out) == (6, 2, 4)
        assert message.endswith("killed or crashed during generate, score")


def _shown(progress: StageProgress) -> str:
    """The progress bar as the terminal would draw it now."""
    from rich.console import Console

    console = Console(file=io.StringIO(), width=300)
    console.print(progress._bar.get_renderable())
    return console.file.getvalue()


def test_a_stopped_stage_counts_in_its_run_s_record_which_adds_up_with_the_ledger(tmp_path, caplog):
    """A stage stopped by an exception (Ctrl-C, a failure) once recorded nothing of itself:
    55 calls in `runs` for 186 in the ledger, no seconds for it, its finished units and calls
    not written. Now what it did is written at the stop and counted in the record, and the
    next start, folding the request that was in flight, counts that too. On the way, the
    progress line counts each call as it is logged. The next
    start says what it added: 1 row, of the 3 calls logged (it said "3 LLM calls added")."""
    settings = Settings(data_dir=tmp_path)
    with pytest.raises(RuntimeError, match="endpoint gone"):
        with recorded_run(settings, "stopped") as run:
            with timed_stage("generate", run.run_id) as report:
                writer = StageWriter(report, settings, every_s=3600.0)  # no write on the way
                with StageProgress(report, 2) as progress, writer:
                    for n in range(3):
                        writer.log.sent(f"k{n}", "openai", "m", "p")
                    for n in range(2):
                        call = LLMCall(f"k{n}", "openai", "m", "p", 10, 20, 0.1, False, "{}", "r")
                        writer.log.append(call)
                    held = Quarantine("item", "generate", "llm_error", "LLMError: down")
                    writer.queue_rows("quarantine", [held], ("item_id", "stage"), update=True)
                    progress.advance(1)
                    assert "0 LLM calls" in _shown(progress)
                    writer.flush()  # written in an hour; counted now
                    assert (report.llm_made, report.tokens_in, report.tokens_out) == (2, 20, 40)
                    assert "2 LLM calls (0 cached)" in _shown(progress)
                    raise RuntimeError("endpoint gone")
    record = (
        "SELECT status, llm_calls_made, tokens_in, tokens_out, stage_seconds, rows_added "
        "FROM runs WHERE run_id = ?"
    )
    with Warehouse(settings.db_path) as wh:
        status, made, tokens_in, tokens_out, seconds, rows = wh.con.execute(
            record, [run.run_id]
        ).fetchall()[0]
        assert (status, made, tokens_in, tokens_out) == ("failed", 2, 20, 40)
        assert json.loads(seconds)["generate"] > 0
        assert json.loads(rows) == {"llm_cache": 2, "fct_llm_calls": 2, "quarantine": 1}
        ledger = "SELECT count(*), sum(tokens_in) FROM fct_llm_calls WHERE run_id = ?"
        assert wh.con.execute(ledger, [run.run_id]).fetchall() == [(2, 20)]
        assert wh.count("quarantine") == 1  # the finished unit's row, written at the stop
    assert call_log_path(tmp_path, run.run_id, "generate").exists()  # for the next start
    with caplog.at_level(logging.WARNING, logger="lilo"), recorded_run(settings, "next"):
        pass
    assert (
        "1 row added to the LLM call ledger from the call logs of killed or stopped runs "
        "(3 calls logged; the others were in the ledger already)" in caplog.text
    )
    with Warehouse(settings.db_path) as wh:
        assert wh.con.execute(ledger, [run.run_id]).fetchall() == [(3, 20)]  # k2 in flight
        assert wh.con.execute(record, [run.run_id]).fetchall()[0][1] == 3


@contextlib.contextmanager
def _read_by_another_process(path):
    """Another process holds `path` open read-only (an analyst's session) until the block ends."""
    reader = subprocess.Popen(
        [sys.executable, "-c",
         f"import duckdb, sys; c = duckdb.connect({str(path)!r}, read_only=True); "
         "print('open', flush=True); sys.stdin.read()"],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        assert reader.stdout is not None and reader.stdout.readline() == "open\n"
        yield
    finally:
        reader.communicate(timeout=30)  # its stdin closed: it ends, the file is free


@pytest.mark.e2e  # a reader of the warehouse in a subprocess
@pytest.mark.slow
def test_a_stop_while_the_warehouse_is_read_says_what_waits_and_loses_no_call(tmp_path, caplog):
    """A stage stopped (Ctrl-C, a failure) while another process reads the warehouse cannot
    write what finished: it says so, and its call log stays, so the next start adds the
    call to the ledger (its reply to the cache: the next run remakes the row, no new call)."""
    settings = Settings(data_dir=tmp_path)
    Warehouse(settings.db_path).close()
    with caplog.at_level(logging.WARNING, logger="lilo"), pytest.raises(RuntimeError):
        with recorded_run(settings, "stopped") as run:
            with timed_stage("generate", run.run_id) as report:
                with _read_by_another_process(settings.db_path):
                    with StageWriter(report, settings, every_s=3600.0) as writer:
                        writer.log.sent("k0", "openai", "m", "p")
                        call = LLMCall("k0", "openai", "m", "p", 10, 20, 0.1, False, "{}", "r")
                        writer.log.append(call)
                        held = Quarantine("item", "generate", "llm_error", "LLMError: down")
                        writer.queue_rows("quarantine", [held], ("item_id", "stage"), update=True)
                        raise RuntimeError("stopped")
    assert "generate: 1 finished rows not written (the warehouse is busy)" in caplog.text
    assert call_log_path(tmp_path, run.run_id, "generate").exists()  # for the next start
    with Warehouse(settings.db_path) as wh:
        assert wh.count("quarantine") == 0 and wh.count("fct_llm_calls") == 0
    with recorded_run(settings, "next"):
        pass
    with Warehouse(settings.db_path) as wh:
        ledger = "SELECT key, tokens_in FROM fct_llm_calls WHERE run_id = ?"
        assert wh.con.execute(ledger, [run.run_id]).fetchall() == [("k0", 10)]
        assert wh.count("llm_cache") == 1


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


def test_a_call_log_is_read_in_steps_of_bounded_bytes(tmp_path):
    """A step reads the whole lines within `most` bytes, or the one line there when it is
    longer: a log of many big replies is never read whole at once."""
    log = CallLog(call_log_path(tmp_path, "r", "score"))
    calls = [
        LLMCall(f"k{i}", "openai", "m", "p", 1, 2, 0.1, False, "{}", "x" * 1000) for i in range(3)
    ]
    for call in calls:
        log.append(call)
    line = log.path.read_bytes().index(b"\n") + 1
    assert read_calls(log.path, 0, most=2 * line + 10) == (calls[:2], 2 * line)
    assert read_calls(log.path, 0, most=10) == (calls[:1], line)  # the line alone
    assert read_calls(log.path, 2 * line, most=10**9) == (calls[2:], 3 * line)


def test_replies_of_many_megabytes_are_written_as_their_bytes_add_up_not_held(tmp_path):
    """An endpoint answering 10 MB a call (under the 16 MB limit): the score stage's calls
    held until the next timed write once drove it to 5.49 GB. The writer writes as soon as
    64 MB of the call log wait (`WRITE_BYTES`), whatever the time; a small call waits."""
    settings = Settings(data_dir=tmp_path)
    reply = "x" * 10_000_000
    with recorded_run(settings, "big replies") as run:
        with timed_stage("score", run.run_id) as report:
            with StageWriter(report, settings, every_s=3600.0) as writer:
                writer.log.append(LLMCall("small", "openai", "m", "p", 1, 2, 0.1, False, "{}", "r"))
                writer.flush()
                with Warehouse(settings.db_path) as wh:
                    assert wh.count("llm_cache") == 0  # written in an hour
                n = 7  # 70 MB
                for i in range(n):
                    call = LLMCall(f"k{i}", "openai", "m", "p", 1, 2, 0.1, False, "{}", reply)
                    writer.log.append(call)
                    writer.flush()
                with Warehouse(settings.db_path) as wh:
                    assert wh.count("llm_cache") == n + 1  # at once: the bytes added up
    with Warehouse(settings.db_path) as wh:
        assert wh.count("fct_llm_calls") == n + 1


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
        wh, "v1", "r1", Expected(["s1"], ["single"], [4000], "offline:m"), scored_by=scored_by()
    )
    _scores(wh, "s2", None)  # the next run's generation failed
    partial = materialize_results(
        wh, "v1", "r2", Expected(["s1", "s2"], ["single"], [4000], "offline:m"),
        publish_partial=publish_partial, scored_by=scored_by(),
    )  # fmt: skip
    assert complete and partial and partial.partial and partial.version == 2
    shown = wh.rows("SELECT scored, expected FROM leaderboard")
    assert shown == ([{"scored": 1, "expected": 2}] if publish_partial else
                     [{"scored": 1, "expected": 1}])  # fmt: skip
    assert wh.scalar("SELECT count(DISTINCT version) FROM res_leaderboard") == 2


@pytest.mark.e2e  # a lilo reader in a subprocess
@pytest.mark.slow
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


@pytest.mark.e2e  # a lilo run in a subprocess on a full disk
@pytest.mark.slow
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
