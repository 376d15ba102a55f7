"""The README's operator path (section "Run it as an operator (offline)"), run as written: its
first fenced block, in a temporary checkout with a PREFECT_HOME of its own, starts
Prefect's server, the loopback arXiv mirror and a worker, deploys, runs `on-demand` and
waits for it; the run must be Completed with its artifacts, and nothing it started left
running. The test sets only what the section itself reads: its ports and PREFECT_HOME."""

from __future__ import annotations

import contextlib
import os
import re
import signal
import socket
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import psutil
import pytest

REPO = Path(__file__).resolve().parent.parent
HEADING = "## Run it as an operator (offline)"
RUN_S = 1800  # the whole section: a server, a deploy, a cold pipeline run, on a loaded machine
ARTIFACTS = {"run-record", "run-summary", "leaderboard", "results", "cost", "failures"}


def operator_commands(readme: str) -> str:
    """The first fenced bash block under the section's heading."""
    after = readme.split(f"\n{HEADING}\n", 1)[1].split("\n## ", 1)[0]
    found = re.search(r"```bash\n(.*?)```", after, re.S)
    assert found, f"no bash block under {HEADING!r}"
    return found.group(1)


def test_the_operator_section_is_near_the_top_and_the_headline_commands_stay():
    """The section comes right after the quick start, the two headline commands before it."""
    readme = (REPO / "README.md").read_text()
    lines = readme.splitlines()
    assert lines.index(HEADING) < lines.index("## Looking at results") < 120
    top = readme.split(HEADING, 1)[0]
    assert ".venv/bin/lilo demo\n```" in top
    assert "```bash\n.venv/bin/python -m pytest -q\n```" in top
    commands = operator_commands(readme)
    assert "prefect server start" in commands and "deployment run" in commands


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _checkout(root: Path) -> Path:
    """A checkout of this repository (its files linked), without its data; `.venv` is this
    one, or one whose `prefect` and `lilo` run this interpreter where it has no scripts of
    its own (a virtual environment sharing another's packages)."""
    root.mkdir()
    for entry in REPO.iterdir():
        if entry.name not in {".git", ".venv", "lilo-data"} and not entry.name.endswith(".log"):
            (root / entry.name).symlink_to(entry)
    venv = REPO / ".venv"
    if (venv / "bin" / "prefect").exists():
        (root / ".venv").symlink_to(venv)
        return root
    bin_dir = root / ".venv" / "bin"
    bin_dir.mkdir(parents=True)
    shims = {"python": "", "prefect": "-m prefect ", "lilo": "-m lilo.flows.cli "}
    for name, args in shims.items():
        shim = bin_dir / name
        shim.write_text(f'#!/bin/sh\nexec {sys.executable} {args}"$@"\n')
        shim.chmod(0o755)
    return root


def _started_in(folder: Path) -> list[psutil.Process]:
    """The processes running in `folder` (the section's server, mirror, worker, runs); an
    ended one its parent has not reaped yet (a zombie) runs no more."""
    mine = []
    for process in psutil.process_iter():
        with contextlib.suppress(psutil.Error):
            if process.status() == psutil.STATUS_ZOMBIE:
                continue
            if Path(process.cwd()).is_relative_to(folder):
                mine.append(process)
    return mine


def _described(process: psutil.Process) -> str:
    """The process's id, parent and command line, to say which one was left."""
    with contextlib.suppress(psutil.Error):
        return f"{process.pid} (parent {process.ppid()}): {' '.join(process.cmdline())[:200]}"
    return str(process.pid)


@pytest.mark.slow
def test_the_operator_section_runs_a_deployment_to_completed_with_its_artifacts(
    tmp_path: Path, used_prefect_home
):
    checkout = _checkout(tmp_path / "checkout")
    home = used_prefect_home(tmp_path / "prefect-home")
    script = tmp_path / "operator.sh"
    script.write_text(operator_commands((REPO / "README.md").read_text()))
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PREFECT_", "LILO_"))}
    env.update(
        PREFECT_HOME=str(home), PREFECT_PORT=str(_free_port()), MIRROR_PORT=str(_free_port())
    )
    log = tmp_path / "operator.log"
    started = time.monotonic()
    with log.open("wb") as out:
        shell = subprocess.Popen(
            ["bash", "-e", str(script)],
            cwd=checkout,
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    left: list[psutil.Process] = []
    what: list[str] = []
    try:
        rc = shell.wait(timeout=RUN_S)
        seconds = time.monotonic() - started
        # The section's last line stops what it started: given time to exit, none is left.
        deadline = time.monotonic() + 60
        while (left := _started_in(checkout)) and time.monotonic() < deadline:
            time.sleep(1)
        what = [_described(p) for p in left]
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(shell.pid, signal.SIGKILL)
        for process in _started_in(checkout):
            with contextlib.suppress(psutil.Error):
                process.kill()
        shell.wait(timeout=30)
    output = log.read_text(errors="replace")
    assert rc == 0, output[-4000:]
    assert "finished successfully in 'Completed'" in output, output[-4000:]
    assert not left, f"the section left these running: {what}"
    with contextlib.closing(sqlite3.connect(home / "prefect.db")) as db:
        runs = db.execute(
            "SELECT r.id, r.state_type FROM flow_run r JOIN deployment d "
            "ON r.deployment_id = d.id WHERE d.name = 'on-demand'"
        ).fetchall()
        assert [state for _, state in runs] == ["COMPLETED"], runs
        keys = {
            key
            for (key,) in db.execute(
                "SELECT key FROM artifact WHERE flow_run_id = ?", [runs[0][0]]
            ).fetchall()
        }
    assert keys >= ARTIFACTS, keys
    assert (checkout / "lilo-data" / "lilo.duckdb").exists()
    print(f"\nthe README's operator section: {seconds:.0f} s; artifacts: {sorted(keys)}")
