"""A no-op rerun as a deployment run: how long `lilo-pipeline/on-demand` takes, from the
moment it is created to `Completed`, when nothing is new, against Prefect's own floor
measured in the same run: a deployment of a bare flow with the same shape (a parent flow
and 8 empty subflows) on the same worker.

    .venv/bin/python -m bench.deployment_noop [--runs 3] [--load 2] [--query-seconds 2]

It sets up what docs/operations.md describes, in a temporary folder and on free ports: a
Prefect server, the `lilo-process` work pool, the `on-demand` deployment from
deployments/prefect.yaml, a worker, and the synthetic corpus behind a loopback arXiv
(`lilo mirror`). A first run builds the data (Single at 4000 words); then `--runs` no-op
reruns and as many bare runs alternate, with `--load` busy processes running meanwhile (a
loaded machine). The worker asks for work every `--query-seconds`
(PREFECT_WORKER_QUERY_SECONDS; Prefect's default is 10).

Prints, per kind (median seconds): `wait` (created until the worker took it: its polling),
`start` (until Running: a new Python process, `import prefect`, the pull step, loading the
flow's module), `flow` (Running until Completed), `total`, and the average subflow; the
reruns' LLM calls (0 expected); and last `ratio=<lilo total / bare total>`.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from prefect import flow
from prefect.context import SettingsContext, get_settings_context
from prefect.settings import (
    PREFECT_API_URL,
    PREFECT_FLOWS_HEARTBEAT_FREQUENCY,
    temporary_settings,
)

ROOT = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent
POOL = "lilo-process"
SURVEY = "2601.00100"  # the synthetic corpus's survey
PARAMETERS = {"methods": ["single"], "target_words": [4000]}


@flow(name="bare-stage")
def bare_stage(i: int) -> int:
    return i


@flow(name="bare-pipeline")
def bare_pipeline(stages: int = 8) -> None:
    """Prefect's floor for lilo's shape: 8 subflows that do nothing, run as lilo runs its
    stages (no heartbeat of their own, the settings that say so built once)."""
    current = get_settings_context()
    quiet = current.settings.copy_with_update(updates={PREFECT_FLOWS_HEARTBEAT_FREQUENCY: None})
    for i in range(stages):
        with SettingsContext(profile=current.profile, settings=quiet):
            bare_stage(i)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _spawn(args: list[str], env: dict[str, str], log: Path) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        args, env=env, cwd=ROOT, start_new_session=True,
        stdout=log.open("wb"), stderr=subprocess.STDOUT,
    )  # fmt: skip


def _check(args: list[str], env: dict[str, str]) -> None:
    done = subprocess.run(args, env=env, cwd=ROOT, capture_output=True, text=True)
    if done.returncode:
        raise SystemExit(f"{' '.join(args)} failed:\n{done.stdout}\n{done.stderr}")


def _wait_for(url: str, seconds: float) -> None:
    import httpx

    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            if httpx.get(url, timeout=2).status_code < 500:
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.5)
    raise SystemExit(f"{url} did not answer in {seconds:.0f} s")


async def _timed_run(name: str, parameters: dict[str, Any]) -> dict[str, Any]:
    """Create a run of deployment `name`, wait for its end, and read its timings."""
    from prefect.client.orchestration import get_client
    from prefect.client.schemas.filters import FlowRunFilter, FlowRunFilterParentFlowRunId
    from prefect.deployments import run_deployment

    run = await run_deployment(name, parameters=parameters, timeout=0)
    async with get_client() as client:
        while not (run := await client.read_flow_run(run.id)).state.is_final():
            await asyncio.sleep(0.2)
        if not run.state.is_completed():
            raise SystemExit(f"{name}: run {run.id} ended {run.state.name}")
        at = {s.name: s.timestamp for s in await client.read_flow_run_states(run.id)}
        children = await client.read_flow_runs(
            flow_run_filter=FlowRunFilter(
                parent_flow_run_id=FlowRunFilterParentFlowRunId(any_=[run.id])
            )
        )
    return {
        "id": str(run.id),
        "wait": (at["Pending"] - run.created).total_seconds(),
        "start": (at["Running"] - at["Pending"]).total_seconds(),
        "flow": (at["Completed"] - at["Running"]).total_seconds(),
        "total": (at["Completed"] - run.created).total_seconds(),
        "subflow": statistics.mean((c.end_time - c.start_time).total_seconds() for c in children),
    }


def _llm_calls(db: Path, run_id: str) -> int:
    import duckdb

    with duckdb.connect(str(db), read_only=True) as con:
        row = con.execute("SELECT llm_calls_made FROM runs WHERE run_id = ?", [run_id]).fetchone()
    return row[0] if row else -1


def _measure(
    args: argparse.Namespace, home: Path, env: dict[str, str], mirror_port: int
) -> tuple[dict[str, Any], dict[str, list[dict[str, Any]]]]:
    """Set up server, mirror, deployments and worker; the first run, then the measured ones.
    Every process it started is stopped at the end."""
    prefect = str(BIN / "prefect")
    api_url = env["PREFECT_API_URL"]
    started: list[subprocess.Popen[bytes]] = []
    try:
        started.append(
            _spawn([prefect, "server", "start", "--host", "127.0.0.1",
                    "--port", api_url.split(":")[-1].split("/")[0]], env, home / "server.log")
        )  # fmt: skip
        started.append(
            _spawn([str(BIN / "lilo"), "mirror", "--corpus", str(home / "corpus"),
                    "--port", str(mirror_port)], env, home / "mirror.log")
        )  # fmt: skip
        _wait_for(f"{api_url}/health", 120)
        _wait_for(f"http://127.0.0.1:{mirror_port}/api/query?id_list={SURVEY}", 60)
        _check([prefect, "work-pool", "create", POOL, "--type", "process"], env)
        _check([prefect, "--no-prompt", "deploy", "--prefect-file", "deployments/prefect.yaml",
                "--name", "on-demand"], env)  # fmt: skip
        with temporary_settings(updates={PREFECT_API_URL: api_url}):
            bare = bare_pipeline.from_source(str(ROOT), "bench/deployment_noop.py:bare_pipeline")
            bare.deploy("bare", work_pool_name=POOL, print_next_steps=False)
            started.append(
                _spawn([prefect, "worker", "start", "--pool", POOL], env, home / "worker.log")
            )  # fmt: skip
            first = asyncio.run(_timed_run("lilo-pipeline/on-demand", PARAMETERS))
            print(f"first run (builds the data, Single at 4000 words): {first['total']:.0f} s")
            started += [
                _spawn([sys.executable, "-c", "while True: pass"], env, Path(os.devnull))
                for _ in range(args.load)
            ]
            measured: dict[str, list[dict[str, Any]]] = {"lilo": [], "bare": []}
            for _ in range(args.runs):
                measured["lilo"].append(
                    asyncio.run(_timed_run("lilo-pipeline/on-demand", PARAMETERS))
                )
                measured["bare"].append(asyncio.run(_timed_run("bare-pipeline/bare", {})))
        return first, measured
    finally:
        for process in started:
            if process.poll() is None:
                os.killpg(process.pid, signal.SIGTERM)
        for process in started:
            process.wait()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--load", type=int, default=0, help="busy processes while measuring")
    parser.add_argument("--query-seconds", type=float, default=2.0)
    args = parser.parse_args()
    home = Path(tempfile.mkdtemp(prefix="lilo-deploy-bench-"))
    api_port, mirror_port = _free_port(), _free_port()
    env = {
        **os.environ,
        "PREFECT_HOME": str(home / "prefect"),
        "PREFECT_API_URL": f"http://127.0.0.1:{api_port}/api",
        "PREFECT_SERVER_ANALYTICS_ENABLED": "false",
        "PREFECT_WORKER_QUERY_SECONDS": str(args.query_seconds),
        "LILO_ARXIV__API_URL": f"http://127.0.0.1:{mirror_port}/api/query",
        "LILO_ARXIV__EPRINT_URL": f"http://127.0.0.1:{mirror_port}/e-print/",
        "LILO_ARXIV__DELAY_S": "0",
        "LILO_SURVEYS": f'["{SURVEY}"]',
        "LILO_DATA_DIR": str(home / "data"),
    }
    first, measured = _measure(args, home, env, mirror_port)
    calls = [_llm_calls(home / "data" / "lilo.duckdb", r["id"]) for r in measured["lilo"]]
    print(f"{args.runs} no-op reruns and {args.runs} bare runs, load {args.load}, worker polling "
          f"every {args.query_seconds:g} s; median seconds:")  # fmt: skip
    print(f"{'':6}{'wait':>8}{'start':>8}{'flow':>8}{'total':>8}{'subflow':>9}")
    medians = {}
    for kind, runs in measured.items():
        medians[kind] = {k: statistics.median(r[k] for r in runs) for k in runs[0] if k != "id"}
        m = medians[kind]
        print(f"{kind:6}{m['wait']:8.2f}{m['start']:8.2f}{m['flow']:8.2f}{m['total']:8.2f}"
              f"{m['subflow']:9.2f}")  # fmt: skip
    print(f"LLM calls made by the reruns: {calls}; files in {home}")
    print(f"ratio={medians['lilo']['total'] / medians['bare']['total']:.2f}")


if __name__ == "__main__":
    main()
