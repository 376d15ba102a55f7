"""A run stops within seconds on Ctrl-C (SIGINT to the terminal's process group) and on a
supervisor's SIGTERM, one mechanism (tasks/lifetime.py): no request after the signal, the
helpers ended, the run recorded `interrupted` with what it did (the stopped stage's time,
calls and rows, adding up with the ledger), exit 130 or 143."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import duckdb
import pytest
from llm_server import LLMServer, seed_dataset

from lilo.tasks.llm.ledger import read_calls, read_sent

pytestmark = pytest.mark.e2e  # a `lilo` run in a subprocess in most tests

LILO = [sys.executable, "-m", "lilo.flows.cli"]
# One sample, two methods: a generate stage long enough to stop in its middle (AgentWrite
# writes the 16,000 words in 80 steps of 200, one after the other), and a resume whose
# rest of generate, score and publish are those of two summaries. A progress line every
# 0.2 s says when `single`'s summary is written.
SMALL_DEMO = [
    *("--methods", "single,agentwrite", "--target-words", "16000"),
    *("--set", "samples.target_samples=1", "--set", "llm.offline.plan_step_words=200"),
    *("--set", "runner.progress_every_s=0.2"),
]


def _env(prefect_home: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PREFECT_API")}
    env["PREFECT_HOME"] = str(prefect_home)
    env["PYTHONPATH"] = os.pathsep.join([str(Path(__file__).parent.parent), *sys.path])
    return env


def _children(pid: int) -> list[int]:
    """The processes whose parent is `pid`."""
    found = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == pid:
            found.append(int(stat.parent.name))
    return found


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


def _wait_for(predicate, timeout_s: float, what: str) -> None:
    deadline = time.monotonic() + timeout_s
    while not predicate():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.1)


def _stop(
    process: subprocess.Popen[str], sig: int, *, group: bool
) -> tuple[float, float, list[int]]:
    """Send `sig` (to the process group, as a terminal does, with `group`); returns when it
    was sent, the seconds to exit and the helpers that were running."""
    helpers = _children(process.pid)
    sent = time.monotonic()
    if group:
        os.killpg(process.pid, sig)
    else:
        process.send_signal(sig)
    process.wait(timeout=120)
    return sent, time.monotonic() - sent, helpers


def _runs(data: Path) -> list[tuple[str, str]]:
    con = duckdb.connect(str(data / "lilo.duckdb"), read_only=True)
    try:
        return con.execute("SELECT status, message FROM runs ORDER BY started_at").fetchall()
    finally:
        con.close()


def _record(data: Path) -> tuple[int, int, int, dict[str, float], dict[str, int], int]:
    """The interrupted run's calls made, the ledger's calls made and rows for it, its stage
    seconds and rows added, and the generations it wrote."""
    con = duckdb.connect(str(data / "lilo.duckdb"), read_only=True)
    try:
        run_id, made, seconds, rows = con.execute(
            "SELECT run_id, llm_calls_made, stage_seconds, rows_added FROM runs "
            "WHERE status = 'interrupted'"
        ).fetchall()[0]
        ledger, ledger_rows = con.execute(
            "SELECT count(*) FILTER (WHERE NOT cached), count(*) FROM fct_llm_calls "
            "WHERE run_id = ?",
            [run_id],
        ).fetchall()[0]
        written = con.execute(
            "SELECT count(*) FROM fct_generations WHERE run_id = ?", [run_id]
        ).fetchall()[0][0]
    finally:
        con.close()
    return made, ledger, ledger_rows, json.loads(seconds), json.loads(rows), written


def _generate_calls_after_the_stop(data: Path) -> tuple[int, int]:
    """The generate calls the completed run made, and the replies both runs made."""
    con = duckdb.connect(str(data / "lilo.duckdb"), read_only=True)
    try:
        return con.execute(
            "SELECT count(*) FILTER (WHERE r.status = 'completed'), "
            "count(*) - count(DISTINCT c.key) FROM fct_llm_calls c JOIN runs r USING (run_id) "
            "WHERE c.stage = 'generate' AND NOT c.cached AND c.replied"
        ).fetchall()[0]
    finally:
        con.close()


@pytest.mark.slow  # a demo stopped mid-generate and resumed
def test_ctrl_c_stops_a_demo_mid_generate_within_seconds(
    tmp_path: Path, used_prefect_home, loopback_embeddings
) -> None:
    """Both runs embed through the loopback server (`_env` passes the fixture's settings
    on): the stop and the resume are the same whatever the vectors."""
    data, home = tmp_path / "data", used_prefect_home(tmp_path / "prefect")
    demo = subprocess.Popen(
        [*LILO, "demo", *SMALL_DEMO, "--data-dir", str(data)],
        env=_env(home),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,  # its own process group, as a terminal gives a command
    )
    output: list[str] = []
    reader = threading.Thread(target=lambda: output.extend(demo.stdout or []), daemon=True)
    reader.start()
    # Mid-generate: `single`'s summary written (a unit's row is written before the progress
    # counts it), AgentWrite's 80 steps under way. Its reply in the call log is not enough:
    # a stop between the reply and the write finds nothing written.
    _wait_for(lambda: any("generate: 1/2 units" in line for line in output)
              or demo.poll() is not None, 600, "the generate stage")  # fmt: skip
    assert demo.poll() is None, "".join(output)
    _, seconds, helpers = _stop(demo, signal.SIGINT, group=True)
    reader.join(5)
    text = "".join(output)
    print(f"SIGINT mid-generate: exit {demo.returncode} after {seconds:.1f} s")
    assert demo.returncode == 130, text
    assert seconds < 15, text
    assert "interrupted by SIGINT" in text and "run the same command again" in text
    assert "Traceback" not in text and "Error logging to API" not in text
    assert "Crash detected" not in text
    _wait_for(lambda: not any(_alive(p) for p in helpers), 5, "the helpers to end")
    status, message = _runs(data)[-1]
    assert status == "interrupted" and "SIGINT" in message
    # Its record adds up what it did, the stopped generate stage included.
    made, ledger, ledger_rows, seconds, rows, written = _record(data)
    assert made == ledger and rows["fct_llm_calls"] == ledger_rows
    assert seconds["generate"] > 0 and rows.get("fct_generations", 0) == written
    assert written >= 1, "the summary finished before the stop was not written"

    # The next run resumes: what was finished is not made again, and it completes.
    again = subprocess.run(
        [*LILO, "demo", *SMALL_DEMO, "--data-dir", str(data)],
        env=_env(home),
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert again.returncode == 0, again.stdout + again.stderr
    assert [s for s, _ in _runs(data)] == ["interrupted", "completed"]
    # The requests in flight at the stop, folded by this start, count in the record too.
    made, ledger, *_ = _record(data)
    assert made == ledger
    # The stop left generate work to do, and what it had made is served from the cache.
    resumed, twice = _generate_calls_after_the_stop(data)
    assert resumed > 0 and twice == 0


def _start_run(
    server: LLMServer, data: Path, home: Path, n_samples: int, *args: str
) -> subprocess.Popen[str]:
    """`lilo run` on dataset v1 of `n_samples` seeded kernel samples (two single QA pairs
    each) against the loopback server, in a subprocess writing to one pipe."""
    seed_dataset(server.settings(data), n_samples)
    return subprocess.Popen(
        [*LILO, "run", "--dataset", "v1", "--data-dir", str(data), *args,
         "--set", "llm.backend=openai", "--set", "llm.model=scripted",
         "--set", f"llm.base_url={server.base_url}", "--set", "llm.api_key=sk-test",
         "--set", "qa.quota_single=2", "--set", "qa.quota_cross=0"],
        env=_env(home),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )  # fmt: skip


@pytest.mark.slow  # a run stopped on a slow endpoint
def test_sigterm_stops_a_run_on_a_slow_endpoint_with_no_request_after_it(
    tmp_path: Path, used_prefect_home, loopback_embeddings
) -> None:
    data, home = tmp_path / "data", used_prefect_home(tmp_path / "prefect")
    arrivals: list[float] = []
    with LLMServer() as server:

        def slow(prompt: str, n: int) -> str:
            arrivals.append(time.monotonic())
            time.sleep(1.0)
            return "KernelForge reaches a test RMSE of 0.635 on Kin40k. " * 20

        server.respond = slow
        run = _start_run(
            server, data, home, 4,
            *("--methods", "single,agentwrite", "--target-words", "400"),
            *("--set", "llm.concurrency=2"),
        )  # fmt: skip
        _wait_for(lambda: len(arrivals) >= 3 or run.poll() is not None, 600, "requests")
        assert run.poll() is None, run.stdout.read() if run.stdout else ""
        sent, seconds, helpers = _stop(run, signal.SIGTERM, group=False)
        time.sleep(2.0)  # anything still to come would arrive now
        text = run.stdout.read() if run.stdout else ""
        before = sum(t <= sent for t in arrivals)
        print(f"SIGTERM: exit {run.returncode} after {seconds:.1f} s; {before} requests before")
        assert run.returncode == 143, text
        assert seconds < 15, text
        # A request the signal caught on its way (sent, not yet read) is at most 0.2 s late.
        assert not [t - sent for t in arrivals if t > sent + 0.2], "requests after SIGTERM"
    assert "interrupted by SIGTERM" in text and "Traceback" not in text
    _wait_for(lambda: not any(_alive(p) for p in helpers), 5, "the helpers to end")
    status, message = _runs(data)[-1]
    assert status == "interrupted" and "SIGTERM" in message


_TWICE = """
import os, signal, sys, time
from lilo.tasks import lifetime
lifetime.stop_on_signals()
sig = getattr(signal, sys.argv[1])
try:
    os.kill(os.getpid(), sig)
    time.sleep(5)
except lifetime.Interrupted as exc:
    print("stopped", exc.exit_code, flush=True)
try:
    lifetime.raise_if_stopping()
except lifetime.Interrupted:
    print("no new call", flush=True)
os.kill(os.getpid(), signal.SIGINT)  # a second Ctrl-C
time.sleep(5)
print("still here")
"""


def test_the_first_signal_stops_the_run_and_a_second_ctrl_c_ends_it_at_once() -> None:
    for name, code in (("SIGINT", 130), ("SIGTERM", 143)):
        started = time.monotonic()
        done = subprocess.run([sys.executable, "-c", _TWICE, name], capture_output=True,
                              text=True, timeout=60)  # fmt: skip
        assert done.stdout == f"stopped {code}\nno new call\n", done.stderr
        assert done.returncode == 130 and time.monotonic() - started < 5


_FINISHED_BEFORE_THE_STOP = """
import os, signal, threading, time
from lilo.tasks import lifetime
from lilo.tasks.parallel import fan_out
lifetime.stop_on_signals()
handed, fast_one = [], threading.Event()
def unit(n):
    if n:
        time.sleep(10)  # still running at the stop
    fast_one.set()
    return n
def ctrl_c():  # while the fan-out waits (up to 1 s) for more units to go with the first
    fast_one.wait()
    time.sleep(0.2)
    os.kill(os.getpid(), signal.SIGINT)
threading.Thread(target=ctrl_c).start()
try:
    fan_out(unit, [0, 1], workers=2, on_done=handed.extend)
except lifetime.Interrupted:
    print("stopped", handed, flush=True)
os._exit(0)
"""


def test_a_unit_finished_before_the_stop_is_handed_over() -> None:
    """The fan-out hands finished units over in groups, waiting up to a second for more
    after the first: a Ctrl-C in that second still hands over the unit that finished."""
    done = subprocess.run([sys.executable, "-c", _FINISHED_BEFORE_THE_STOP],
                          capture_output=True, text=True, timeout=60)  # fmt: skip
    assert done.stdout == "stopped [(0, 0)]\n", done.stderr


_BROKEN_BY_THE_STOP = """
import signal
from lilo.tasks import lifetime
print(lifetime.interrupt_signal(RuntimeError("Query interrupted")))
lifetime.stop(signal.SIGTERM)
print(lifetime.interrupt_signal(RuntimeError("Query interrupted")))
"""


def test_what_the_stop_breaks_on_its_way_out_is_the_stop() -> None:
    """SIGTERM in the middle of a DuckDB query surfaces as its RuntimeError "Query
    interrupted": once the run is stopping, that is the signal (the run is recorded
    `interrupted`, exit 143), not a failure."""
    done = subprocess.run([sys.executable, "-c", _BROKEN_BY_THE_STOP], capture_output=True,
                          text=True, timeout=60)  # fmt: skip
    assert done.stdout == "None\n15\n", done.stderr


@pytest.mark.slow  # a run stopped in the middle of a streamed reply
def test_ctrl_c_hangs_up_a_streamed_request_and_exits_before_it_would_end(
    tmp_path: Path, used_prefect_home, loopback_embeddings
) -> None:
    """A reply streamed a word every 0.5 s, 60 s in all: SIGINT mid-reply ends the process
    long before it would have ended, and the server sees the client gone (a server that
    stops on a disconnect stops computing it). The call is not recorded as replied."""
    data, home = tmp_path / "data", used_prefect_home(tmp_path / "prefect")
    with LLMServer() as server:
        server.chunk_s = 0.5
        server.respond = lambda prompt, n: "word " * 120
        run = _start_run(server, data, home, 1, "--methods", "single", "--target-words", "400")
        # Streaming: a request is under way once the server has it and a second has passed.
        _wait_for(lambda: server.answered or run.poll() is not None, 600, "a request")
        time.sleep(1.0)
        assert run.poll() is None, run.stdout.read() if run.stdout else ""
        sent, seconds, _ = _stop(run, signal.SIGINT, group=False)
        text = run.stdout.read() if run.stdout else ""
        _wait_for(lambda: server.hung_up, 5, "the server to see the client gone")
        print(f"SIGINT mid-stream: exit {run.returncode} after {seconds:.1f} s")
        assert run.returncode == 130, text
        assert seconds < 15, text  # the reply would have taken 60 s
        assert server.hung_up[0] - sent < 15
    assert "interrupted by SIGINT" in text and "Traceback" not in text
    status, _ = _runs(data)[-1]
    assert status == "interrupted"
    # The request hung up on was sent and not replied: the next start folds it into the
    # ledger as such, and the resumed run asks it again.
    sent = {r["key"] for log in (data / "runs").glob("*/*.sent") for r in read_sent(log)}
    replied = {c.key for log in (data / "runs").glob("*/*.jsonl") for c in read_calls(log)[0]}
    assert sent - replied
