"""A run's cap (`--max-tokens`, `--max-cost`; runner.max_tokens, runner.max_cost) stops it
cleanly: no request past the cap (held before each call is sent, tasks/llm/budget.py), the
run recorded `stopped` with one line saying what it spent and how to resume, exit 3; a
rerun with a larger cap continues where it stopped, no key asked twice."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import duckdb
import pytest
from llm_server import LLMServer, seed_dataset

pytestmark = pytest.mark.e2e  # `lilo run` in a subprocess

LILO = [sys.executable, "-m", "lilo.flows.cli"]


def _env(prefect_home: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PREFECT_API")}
    env["PREFECT_HOME"] = str(prefect_home)
    env["PYTHONPATH"] = os.pathsep.join([str(Path(__file__).parent.parent), *sys.path])
    return env


def _run(server: LLMServer, data: Path, home: Path, *more: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [*LILO, "run", "--dataset", "v1", "--data-dir", str(data),
         "--methods", "single", "--target-words", "400",
         "--set", "llm.backend=openai", "--set", "llm.model=scripted",
         "--set", f"llm.base_url={server.base_url}", "--set", "llm.api_key=sk-test",
         "--set", "qa.quota_single=2", "--set", "qa.quota_cross=0", *more],
        env=_env(home),
        capture_output=True,
        text=True,
        timeout=600,
    )  # fmt: skip


def _sql(data: Path, query: str) -> list[tuple]:
    con = duckdb.connect(str(data / "lilo.duckdb"), read_only=True)
    try:
        return con.execute(query).fetchall()
    finally:
        con.close()


@pytest.mark.slow  # `lilo run` in a subprocess, three times
def test_a_run_stops_at_its_cap_and_a_larger_cap_continues_with_no_call_repeated(
    tmp_path: Path, used_prefect_home, loopback_embeddings
) -> None:
    data, home = tmp_path / "data", used_prefect_home(tmp_path / "prefect")
    with LLMServer() as server:
        server.respond = lambda prompt, n: "KernelForge reaches a test RMSE of 0.635. " * 10
        seed_dataset(server.settings(data), 2)
        # A cap that no call fits: none is sent, the run stops recorded, with the line.
        tiny = _run(server, data, home, "--max-tokens", "1")
        text = tiny.stdout + tiny.stderr
        assert tiny.returncode == 3, text
        assert server.answered == 0 and not server.prompts, "a request past the cap"
        assert "recorded `stopped`, stopped by its budget: spent 0 of 1 tokens" in text
        assert "run the same command with a larger --max-tokens" in text
        assert "Traceback" not in text
        status, message = _sql(data, "SELECT status, message FROM runs")[-1]
        assert status == "stopped" and message.startswith("stopped by its budget")

        # A cap that some calls fit (a summary's call holds 33k tokens, its 32k budget and
        # its prompt, until its reply says it used far fewer): they are made, the next one
        # is not sent.
        partway = _run(server, data, home, "--max-tokens", "40000")
        text = partway.stdout + partway.stderr
        print(f"--max-tokens 40000: exit {partway.returncode}, {server.answered} requests")
        assert partway.returncode == 3 and server.answered > 0, text
        spent, made = _sql(
            data, "SELECT tokens_in + tokens_out, llm_calls_made FROM runs "
            "ORDER BY started_at DESC LIMIT 1",
        )[0]  # fmt: skip
        assert spent <= 40000 and made == server.answered

        # A larger cap: the run continues where it stopped and ends (`partial`: the
        # scripted replies are no judge's verdicts, so the judged units are quarantined).
        before = server.answered
        done = _run(server, data, home, "--max-tokens", "100000000")
        assert done.returncode == 1 and "stopped by its budget" not in done.stderr, (
            done.stdout + done.stderr
        )
        print(f"resumed: {before} requests before the cap, {server.answered - before} after")
    statuses = [s for (s,) in _sql(data, "SELECT status FROM runs ORDER BY started_at")]
    assert statuses == ["stopped", "stopped", "partial"]
    (twice,) = _sql(
        data, "SELECT count(*) - count(DISTINCT key) FROM fct_llm_calls "
        "WHERE NOT cached AND replied",
    )[0]  # fmt: skip
    assert twice == 0, "a key asked twice"
    assert server.answered == len(server.prompts)
