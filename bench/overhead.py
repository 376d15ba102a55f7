"""lilo's overhead over an ideal client: the generate and score stages against a
loopback OpenAI-compatible endpoint that answers each request after `--latency-ms` and
serves at most `--concurrency` at once (more wait), then an ideal client (bare HTTP on
`--concurrency` threads) sending the same number of requests to the same endpoint. The
endpoint runs in a process of its own, as a real server does: in lilo's process it would
take the interpreter lock from the client it measures.

    .venv/bin/python -m bench.overhead --calls 2000 --latency-ms 200 --concurrency 8

Prints the pipeline's wall time and calls, the ideal's, per-unit overhead, peak requests in
flight (at the endpoint) and, last, `ratio=<wall/ideal>`. Samples are sized so that the
stages make about `--calls` requests, every one distinct (Single at one length, scored for
S_l, S_c, S_q; the win-rate off). The Prefect server starts before the clock does.
"""

from __future__ import annotations

import argparse
import http.client
import json
import multiprocessing
import os
import re
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from lilo.tasks.synthetic.replies import judge_reply

PAPER = (
    "We introduce KernelForge, a kernel learning method for Gaussian processes.\n"
    "On the Kin40k benchmark, KernelForge obtains a test RMSE of 0.635.\n"
    "KernelForge reaches a negative log predictive density of 1.42 on the Airline series.\n"
    "Training takes 3.5 GPU hours on a single accelerator."
)
QUESTIONS = [  # "KernelForge" becomes the sample's own name, so no two grades are the same
    ("What test RMSE does KernelForge obtain on Kin40k?", "A test RMSE of 0.635."),
    ("What does KernelForge reach on Airline?", "A negative log predictive density of 1.42."),
]


def _reply(prompt: str) -> str:
    """What a model says to each kind of prompt lilo sends: a summary names its sample."""
    name = re.search(r"KernelForge\d+", prompt)
    summary = f"{name.group() if name else 'KernelForge'} reaches a test RMSE of 0.635. " * 40
    return judge_reply(prompt) or summary


class Endpoint(ThreadingHTTPServer):
    """Answers after `latency_s`, at most `concurrency` requests at a time."""

    daemon_threads = True
    request_queue_size = 256

    def __init__(self, latency_s: float, concurrency: int) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.latency_s = latency_s
        self.slots = threading.Semaphore(concurrency)
        self.lock = threading.Lock()
        self.count = self.in_flight = self.peak = 0


def _serve(latency_s: float, concurrency: int, port: Any) -> None:
    """The endpoint's process: serves until killed, its port sent back through `port`."""
    endpoint = Endpoint(latency_s, concurrency)
    port.value = endpoint.server_address[1]
    endpoint.serve_forever()


class _Handler(BaseHTTPRequestHandler):
    server: Endpoint
    protocol_version = "HTTP/1.1"

    def log_message(self, *args: object) -> None:
        pass

    def do_GET(self) -> None:  # noqa: N802 (http.server's naming)
        """`/stats`: requests served and the peak in flight; `/reset` zeroes them."""
        server = self.server
        with server.lock:
            stats = {"count": server.count, "peak": server.peak}
            if self.path == "/reset":
                server.count = server.peak = 0
        self._send(json.dumps(stats).encode())

    def _send(self, data: bytes) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_POST(self) -> None:  # noqa: N802 (http.server's naming)
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        if not self.path.endswith("/chat/completions"):  # lilo asking about the model
            self.send_response(404)
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        server = self.server
        with server.slots:
            with server.lock:
                server.count += 1
                server.in_flight += 1
                server.peak = max(server.peak, server.in_flight)
            time.sleep(server.latency_s)
            with server.lock:
                server.in_flight -= 1
        content = _reply(body["messages"][-1]["content"])
        data = json.dumps(
            {
                "id": "c",
                "object": "chat.completion",
                "created": 0,
                "model": body["model"],
                "choices": [
                    {
                        "index": 0,
                        "message": {"role": "assistant", "content": content},
                        "finish_reason": "stop",
                    }
                ],
                "usage": {"prompt_tokens": 100, "completion_tokens": 50, "total_tokens": 150},
            }
        ).encode()
        self._send(data)


def start_endpoint(latency_s: float, concurrency: int) -> tuple[Any, int]:
    """The endpoint in a process of its own (a clean one, whatever lilo started), and its
    port once it listens."""
    spawn = multiprocessing.get_context("spawn")
    port = spawn.Value("i", 0)
    server = spawn.Process(target=_serve, args=(latency_s, concurrency, port), daemon=True)
    server.start()
    while not port.value:
        time.sleep(0.01)
    return server, port.value


def bench_settings(data_dir: Path, base_url: str, concurrency: int) -> Any:
    """Single at one length against the endpoint, scored for S_l, S_c (2 questions a
    sample) and S_q; no retries, no win-rate: every request one call."""
    from lilo.tasks.config import Settings

    return Settings(data_dir=data_dir).with_overrides(
        {
            "llm": {
                "backend": "openai",
                "model": "bench",
                "base_url": base_url,
                "api_key": "sk-bench",
                "concurrency": concurrency,
                "retries": 0,
            },
            "judge.concurrency": concurrency,
            "generate.methods": ["single"],
            "generate.target_words": [300],
            "qa.quota_single": 2,
            "qa.quota_cross": 0,
            "winrate_against": "",
        }
    )


def _seed(settings: Any, n_samples: int) -> None:
    from lilo.tasks.records import PaperText, QAPair, Sample
    from lilo.warehouse import Warehouse

    papers = [
        PaperText(f"p{i:05d}", "K", PAPER.replace("KernelForge", f"KernelForge{i}"), 40, 60,
                  "main.tex", "t", "s", f"c{i}")
        for i in range(n_samples)
    ]  # fmt: skip
    samples = [
        Sample(f"s{i:05d}", "v1", (p.paper_id,), f"topic {i}", "2601.00000", 40, "command")
        for i, p in enumerate(papers)
    ]
    pairs = [
        QAPair(f"{s.sample_id}-q{i}", s.sample_id, "single", s.paper_ids,
               q.replace("KernelForge", f"KernelForge{n}"), a, (), "approved", 1, "auto", "",
               "p1", "seed")
        for n, s in enumerate(samples)
        for i, (q, a) in enumerate(QUESTIONS)
    ]  # fmt: skip
    with Warehouse(settings.db_path) as wh:
        wh.upsert("dim_papers", papers, ("paper_id",), extra={"run_id": "seed"})
        wh.upsert("dim_samples", samples, ("sample_id",), extra={"run_id": "seed"})
        wh.upsert("fct_qa_pairs", pairs, ("qa_id",), extra={"run_id": "seed"})


def _stats(port: int, path: str = "/stats") -> dict[str, int]:
    con = http.client.HTTPConnection("127.0.0.1", port)
    con.request("GET", path)
    return json.loads(con.getresponse().read())


def _ideal(port: int, calls: int, concurrency: int) -> float:
    """`calls` requests on `concurrency` threads, one kept-alive connection each."""
    body = json.dumps(
        {"model": "m", "messages": [{"role": "user", "content": "Write."}], "max_tokens": 10}
    ).encode()
    local = threading.local()

    def one(_: int) -> None:
        if not hasattr(local, "con"):
            local.con = http.client.HTTPConnection("127.0.0.1", port)
        local.con.request(
            "POST", "/v1/chat/completions", body, {"Content-Type": "application/json"}
        )
        local.con.getresponse().read()

    started = time.perf_counter()
    with ThreadPoolExecutor(concurrency) as pool:
        list(pool.map(one, range(calls)))
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--calls", type=int, default=2000)
    parser.add_argument("--latency-ms", type=float, default=200.0)
    parser.add_argument("--concurrency", type=int, default=8)
    args = parser.parse_args()

    home = Path(tempfile.mkdtemp(prefix="lilo-overhead-"))
    os.environ.setdefault("PREFECT_HOME", str(home / "prefect"))
    os.environ.setdefault("PREFECT_LOGGING_LEVEL", "ERROR")
    os.environ.setdefault("PREFECT_SERVER_ANALYTICS_ENABLED", "false")
    os.environ.setdefault("PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS", "120")
    from prefect import flow
    from prefect.settings import PREFECT_FLOWS_HEARTBEAT_FREQUENCY, temporary_settings

    from lilo.flows._run import recorded_run
    from lilo.flows.generate import generate_flow
    from lilo.flows.score import score_flow

    server, port = start_endpoint(args.latency_ms / 1000, args.concurrency)
    base_url = f"http://127.0.0.1:{port}/v1"
    settings = bench_settings(home / "data", base_url, args.concurrency)
    per_sample = 1 + 2 * len(QUESTIONS) + 8  # Single; answer + grade per question; 8 aspects
    n_samples = max(1, round(args.calls / per_sample))
    _seed(settings, n_samples)

    @flow(name="overhead-warmup")
    def warmup() -> None:
        pass

    with temporary_settings(updates={PREFECT_FLOWS_HEARTBEAT_FREQUENCY: None}):
        warmup()  # the Prefect server starts here, before the clock
        started, cpu = time.perf_counter(), time.process_time()
        with recorded_run(settings, "overhead") as run:
            for stage in (generate_flow, score_flow):
                run.add(stage(settings, run.run_id))
        wall, cpu = time.perf_counter() - started, time.process_time() - cpu
    served = _stats(port, "/reset")
    calls, peak = served["count"], served["peak"]
    ideal_cpu = time.process_time()
    ideal = _ideal(port, calls, args.concurrency)
    ideal_cpu = time.process_time() - ideal_cpu
    stages = ", ".join(f"{r.stage} {r.seconds:.1f} s" for r in run.reports)
    print(f"samples={n_samples} calls={calls} latency_ms={args.latency_ms:g} C={args.concurrency}")
    print(f"pipeline: {wall:.2f} s ({stages}); run {run.row['status']}")
    print(f"ideal: {ideal:.2f} s (peak in flight {_stats(port)['peak']})")
    print(f"peak in flight (pipeline): {peak} of {args.concurrency}")
    print(f"overhead per call: {(wall - ideal) / calls * 1000:.2f} ms")
    print(
        f"client CPU per call: pipeline {cpu / calls * 1000:.2f} ms, "
        f"ideal {ideal_cpu / calls * 1000:.2f} ms"
    )
    print(f"ratio={wall / ideal:.3f}")
    server.kill()


if __name__ == "__main__":
    main()
