"""Runs killed with SIGKILL lose nothing and count every request: the generate
and score stages against bench.overhead's loopback endpoint (latency, concurrency limit, a
request counter), killed at `--kills` random moments and run again to the end, against one
run that nobody kills. Prints whether the final tables are identical, the requests the
endpoint counted against the ledger's (every row not served from the cache, with or without
a reply), the runs left `running` and the files left behind.

    .venv/bin/python -m bench.kill --samples 120 --kills 5
"""

from __future__ import annotations

import argparse
import os
import random
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from bench.overhead import _seed, _stats, bench_settings, start_endpoint


def _child(data_dir: str, base_url: str, concurrency: int) -> None:
    """One run of generate and score, as a process of its own (the one that is killed)."""
    from prefect import flow

    from lilo.flows._run import recorded_run
    from lilo.flows.generate import generate_flow
    from lilo.flows.score import score_flow

    settings = bench_settings(Path(data_dir), base_url, concurrency)

    @flow(name="kill-bench")
    def run() -> None:
        with recorded_run(settings, "kill-bench") as record:
            for stage in (generate_flow, score_flow):
                record.stage(stage)

    run()


def _run(data_dir: Path, base_url: str, concurrency: int, kill_after: float | None) -> bool:
    """A run in its own process group (its Prefect server too); SIGKILL after `kill_after`
    seconds. True when it was killed before it ended."""
    env = {**os.environ, "PREFECT_LOGGING_LEVEL": "ERROR"}
    process = subprocess.Popen(
        [sys.executable, "-m", "bench.kill", "--child", str(data_dir), base_url,
         str(concurrency)],
        env=env, start_new_session=True, stdout=subprocess.DEVNULL,
    )  # fmt: skip
    try:
        process.wait(timeout=kill_after)
        return False
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        process.wait()
        return True


def _tables(db: Path) -> dict[str, Any]:
    import duckdb

    con = duckdb.connect(str(db), read_only=True)
    try:
        return {
            "generations": con.execute(
                "SELECT * EXCLUDE (run_id, latency_s) FROM fct_generations ORDER BY ALL"
            ).fetchall(),
            "scores": con.execute(
                "SELECT * EXCLUDE (run_id) FROM fct_scores ORDER BY ALL"
            ).fetchall(),
            "requests": con.execute(
                "SELECT count(*) FILTER (WHERE NOT cached), "
                "count(*) FILTER (WHERE NOT cached AND NOT replied) FROM fct_llm_calls"
            ).fetchone(),
            "running": con.execute("SELECT count(*) FROM runs WHERE status = 'running'").fetchone(),
            "statuses": con.execute(
                "SELECT status, count(*) FROM runs GROUP BY ALL ORDER BY ALL"
            ).fetchall(),
        }
    finally:
        con.close()


def main() -> None:
    if sys.argv[1:2] == ["--child"]:
        _child(sys.argv[2], sys.argv[3], int(sys.argv[4]))
        return
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--samples", type=int, default=120)
    parser.add_argument("--kills", type=int, default=5)
    parser.add_argument("--latency-ms", type=float, default=200.0)
    parser.add_argument("--concurrency", type=int, default=8)
    parser.add_argument("--seed", type=int, default=11)
    args = parser.parse_args()
    rng = random.Random(args.seed)
    home = Path(tempfile.mkdtemp(prefix="lilo-kill-"))
    os.environ.setdefault("PREFECT_HOME", str(home / "prefect"))
    os.environ.setdefault("PREFECT_SERVER_ANALYTICS_ENABLED", "false")

    server, port = start_endpoint(args.latency_ms / 1000, args.concurrency)
    base_url = f"http://127.0.0.1:{port}/v1"

    results = {}
    for name, kills in (("unkilled", 0), ("killed", args.kills)):
        data_dir = home / name
        _seed(bench_settings(data_dir, base_url, args.concurrency), args.samples)
        _stats(port, "/reset")
        started, moments = time.perf_counter(), []
        for _ in range(kills):
            moment = rng.uniform(8.0, 30.0)
            if not _run(data_dir, base_url, args.concurrency, moment):
                break  # it ended first: nothing left to kill
            moments.append(round(moment, 1))
        _run(data_dir, base_url, args.concurrency, None)  # to the end
        results[name] = (_tables(data_dir / "lilo.duckdb"), _stats(port)["count"])
        left = [
            p.relative_to(data_dir)
            for p in [*data_dir.glob("tmp/.*.tmp*"), *data_dir.glob("runs/*/*")]
        ]
        print(
            f"{name}: killed at {moments} s; {time.perf_counter() - started:.0f} s in all; "
            f"files left: {left or 'none'}"
        )
    plain, killed = results["unkilled"][0], results["killed"][0]
    for table in ("generations", "scores"):
        same = plain[table] == killed[table]
        print(f"{table}: {len(killed[table])} rows, identical to the unkilled run: {same}")
    for name, (tables, count) in results.items():
        sent, unanswered = tables["requests"]
        print(
            f"{name}: endpoint counted {count} requests; ledger {sent} sent ({unanswered} with "
            f"no reply); runs {tables['statuses']}, left running: {tables['running'][0]}"
        )
    server.kill()


if __name__ == "__main__":
    main()
