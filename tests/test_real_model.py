"""The real_model tier: lilo against llama.cpp's server with Gemma 3 270M (the `local-llm`
extra), on 127.0.0.1, nothing mocked: the one-command demo on the small synthetic corpus
(Single and RAL-Writer) and its rerun, which starts no server, an imported benchmark whose
prompts cannot fit the server's window, the KV probe and its rerun, and the errors a real
server produces (a file that is no model, a server killed while a command runs).
`pytest -m real_model` runs it (.ci/run does, every time; README, Development); the
default run deselects it. A server that cannot start fails the
tier with its reason: it is never skipped."""

from __future__ import annotations

import os
import re
import signal
import threading
import time
from pathlib import Path

import duckdb
import pytest
from test_import_benchmark import write_benchmark

from lilo.flows.cli import main
from lilo.flows.cli._local_model import LocalModel

pytestmark = pytest.mark.real_model


def _sql(data: Path, query: str, file: str = "published/lilo.duckdb") -> list[tuple]:
    con = duckdb.connect(str(data / file), read_only=True)
    try:
        return con.execute(query).fetchall()
    finally:
        con.close()


def _pointed_at(server: LocalModel) -> list[str]:
    """`--set` options pointing llm.* at the tier's server, as a user with a server would."""
    return [arg for k, v in server.settings().items() for arg in ("--set", f"{k}={v}")]


def _made(out: str) -> int:
    """The LLM calls a command's summary says it made."""
    return int(re.search(r"(\d+) LLM calls made", out)[1])


def test_the_one_command_demo_runs_on_the_packaged_model_and_reruns_from_the_cache(
    tmp_path, capsys, prefect_harness
):
    data = tmp_path / "data"
    assert main(["demo", "--local-model", "--data-dir", str(data)]) == 0
    out = capsys.readouterr().out
    assert "local model gemma-3-270m-q4_k_m served by llama.cpp at http://127.0.0.1:" in out
    # The server's own count of the chat requests it answered is lilo's ledger (the QA pairs
    # are the offline engine's: qa.writer in the local-model profile).
    answered = int(re.search(r"llama\.cpp logged (\d+) chat requests?", out)[1])
    ledger = _sql(
        data,
        "SELECT backend, count(*) FROM fct_llm_calls WHERE NOT cached GROUP BY 1 ORDER BY 1",
        "lilo.duckdb",
    )
    assert ledger == [("offline", ledger[0][1]), ("openai", answered)] and answered > 0
    board = _sql(data, "SELECT method, target_words, backbone, scored FROM leaderboard ORDER BY 1")
    model = "openai:gemma-3-270m-q4_k_m"
    assert board == [("ral_writer", 200, model, 1), ("single", 200, model, 1)]
    # RAL-Writer's plan keeps its first 2 steps (generate.plan_steps_cap in the profile): the
    # model's plans echo the papers line by line, a writer call each.
    calls = _sql(
        data, "SELECT llm_calls FROM fct_generations WHERE method = 'ral_writer'", "lilo.duckdb"
    )
    assert calls[0][0] <= 1 + 2, calls
    assert not list((data / "tmp").glob(".llama-server-*"))  # stopped, its log removed

    # The same weights: everything is served from the cache, and no server is started.
    assert main(["demo", "--local-model", "--data-dir", str(data)]) == 0
    out = capsys.readouterr().out
    assert "0 LLM calls made" in out
    assert "the local model was not started: every reply came from the cache" in out


def test_a_command_whose_replies_are_cached_starts_no_local_model(
    tmp_path, capsys, prefect_harness
):
    """The server starts at the first request not in the cache (it took 52 s to load the
    model for a rerun that needed no call); the first run's one call starts it."""
    data = tmp_path / "data"
    args = ["probe", "kv", "--keys", "10", "--positions", "0", "--examples", "1"]
    args += ["--local-model", "--data-dir", str(data)]
    assert main(args) == 0
    assert "llama.cpp logged 1 chat request; stopping it" in capsys.readouterr().out
    assert main(args) == 0
    out = capsys.readouterr().out
    assert "0 LLM calls made" in out, out
    assert "the local model was not started: every reply came from the cache" in out
    assert not list((data / "tmp").glob(".llama-server-*"))  # no log left either


def test_a_benchmark_prompt_that_cannot_fit_the_window_is_recorded_without_a_call(
    local_llm, tmp_path, capsys, prefect_harness
):
    """The tier's server holds 8,192 tokens; the fixture benchmark's three papers are about
    9,500. Single and RAL-Writer's planner read them whole: each is a failure
    `context_exceeded` naming both numbers, and the server never sees the request."""
    clone = write_benchmark(tmp_path / "clone", groups=(2,))
    data = tmp_path / "data"
    assert main(["import", "longinoutbench", str(clone), "--data-dir", str(data)]) == 0
    before = local_llm.chat_requests()
    args = ["run", "--dataset", "longinoutbench", "--samples", "1", "--data-dir", str(data)]
    args += ["--methods", "single,ral_writer", "--target-words", "1000", *_pointed_at(local_llm)]
    assert main(args) == 1  # nothing scored
    capsys.readouterr()
    assert local_llm.chat_requests() == before
    assert main(["failures", "--data-dir", str(data)]) == 0
    failures = capsys.readouterr().out
    assert failures.count("context_exceeded") == 2, failures
    assert re.search(r"prompt \d{4,} tokens, window 8192", failures), failures


def test_the_kv_probe_on_a_real_model(local_llm, tmp_path, capsys, prefect_harness):
    data = tmp_path / "data"
    before = local_llm.chat_requests()
    args = ["probe", "kv", "--keys", "10", "--positions", "0,5,9", "--examples", "2"]
    assert main([*args, "--data-dir", str(data), *_pointed_at(local_llm)]) == 0
    out = capsys.readouterr().out
    assert _made(out) == 6 == local_llm.chat_requests() - before
    curve = _sql(data, "SELECT position, n, accuracy FROM probe_curve ORDER BY position")
    assert [(p, n) for p, n, _ in curve] == [(0, 2), (5, 2), (9, 2)]
    assert all(0.0 <= a <= 1.0 for _, _, a in curve)


def test_a_file_that_is_no_model_fails_in_one_line_with_the_servers_log(
    tmp_path, capsys, prefect_harness
):
    """A file that is no GGUF fails at once; one that only begins as one starts the server
    at the first request, which fails it: each call recorded as failed, then the command
    with the server's end and its log."""
    bad = tmp_path / "model.gguf"
    bad.write_bytes(b"not a GGUF file")
    data = tmp_path / "data"
    args = ["probe", "kv", "--keys", "10", "--positions", "0", "--examples", "1"]
    assert main([*args, "--local-model", str(bad), "--data-dir", str(data)]) == 2
    err = capsys.readouterr().err.strip()
    assert err == f"lilo: --local-model {bad}: not a GGUF file (it does not begin with GGUF)"
    bad.write_bytes(b"GGUF" + bytes(60))
    assert main([*args, "--local-model", str(bad), "--data-dir", str(data)]) == 1
    err = capsys.readouterr().err.strip().splitlines()[-1]
    assert re.fullmatch(
        r"lilo: the local model server exited with code \d+: its output is in \S+", err
    )
    log = Path(err.rsplit(" ", 1)[1])
    assert log.parent == data / "tmp" and "model.gguf" in log.read_text()
    answers = "SELECT count(*), count(*) FILTER (WHERE error <> '') FROM fct_probe_answers"
    assert _sql(data, answers, "lilo.duckdb") == [(1, 1)]  # recorded as failed
    assert main(["probe", "kv", "--local-model", str(tmp_path / "absent.gguf")]) == 2
    assert "no such GGUF file" in capsys.readouterr().err


def _kill_the_server_once_it_answers(data: Path) -> str:
    """SIGKILL to the llama.cpp server writing its log under `data` once lilo has seen it
    answer (its model list), as a crash or the OOM killer would end it; not the tier's own
    server, also a child of this process. Returns what happened, for the assertion."""
    deadline, log = time.monotonic() + 120, None
    while log is None and time.monotonic() < deadline:
        for found in (data / "tmp").glob(".llama-server-*.tmp"):
            if '"GET /v1/models HTTP/1.1" 200' in found.read_text(errors="replace"):
                log = found
        time.sleep(0.2)
    for fd in Path("/proc").glob("[0-9]*/fd/1"):
        try:
            writes_the_log = log is not None and Path(os.readlink(fd)) == log
        except OSError:
            continue
        if writes_the_log:
            os.kill(int(fd.parent.parent.name), signal.SIGKILL)
            return "killed"
    return "no server found"


def test_a_server_that_dies_while_a_command_runs_fails_it_naming_its_end_and_log(
    tmp_path, capsys, prefect_harness
):
    data = tmp_path / "data"
    outcome: list[str] = []
    killer = threading.Thread(
        target=lambda: outcome.append(_kill_the_server_once_it_answers(data)), daemon=True
    )
    killer.start()
    args = ["probe", "kv", "--keys", "10", "--positions", "0", "--examples", "1"]
    code = main([*args, "--local-model", "--set", "llm.retries=0", "--data-dir", str(data)])
    killer.join(timeout=30)
    out, err = capsys.readouterr()
    assert outcome == ["killed"]
    assert code == 1, err
    said = re.search(
        r"lilo: the local model server was ended by SIGKILL while the command ran: its output "
        r"is in (\S+); the calls it did not answer are recorded as failed",
        err,
    )
    assert said, err
    assert "Uvicorn running on" in Path(said[1]).read_text()  # its log, kept
    # A streamed reply is logged as it starts: the kill may come before it or after.
    assert re.search(r"llama\.cpp logged [01] chat requests?; stopping it", out), out
    # the command's one answer is recorded, as failed: the next run retries it
    answers = "SELECT count(*), count(*) FILTER (WHERE error <> '') FROM fct_probe_answers"
    assert _sql(data, answers, "lilo.duckdb") == [(1, 1)]
