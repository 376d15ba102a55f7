"""The score stage's peak memory against a judge whose every reply is `--reply-mb` of valid,
padded JSON (under `llm.max_reply_bytes`): `--samples` one-paper samples of `--questions`
approved questions each, one Single generation a sample, so the stage makes
`samples * (2 * questions + 8)` judge calls (an answer and a grade a question, 8 aspects).
The judge is tests/llm_server.py's loopback endpoint in a process of its own; the
generations are made first, in a process of their own, against an unpadded one; the score
stage then runs alone in a fresh process, whose peak RSS is the number printed.

    .venv/bin/python -m bench.big_replies --samples 2 --questions 9 --reply-mb 10

Prints the stage's calls, the reply characters cached, the run's status, and, last,
`peak_rss_mb=<the score process's peak>`.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

TESTS = Path(__file__).resolve().parent.parent / "tests"


def _serve(reply_bytes: int, port: Any) -> None:
    sys.path.insert(0, str(TESTS))
    from llm_server import LLMServer

    from lilo.tasks.synthetic.replies import judge_reply

    def respond(prompt: str, n: int) -> str:
        """The judge's reply, valid JSON (or an answer) padded with spaces to `reply_bytes`:
        the server's own padding (`LLMServer.reply_bytes`) makes a grade unusable."""
        reply = judge_reply(prompt) or "KernelForge reaches a test RMSE of 0.635. " * 40
        return reply + " " * max(0, reply_bytes - len(reply))

    server = LLMServer()
    server.respond = respond
    port.value = server.server_address[1]
    server.serve_forever(0.05)


def start_endpoint(reply_bytes: int) -> tuple[Any, str]:
    """tests/llm_server.py's endpoint, each reply padded to `reply_bytes` (0: not padded),
    in a process of its own; its base URL once it listens."""
    spawn = multiprocessing.get_context("spawn")
    port = spawn.Value("i", 0)
    server = spawn.Process(target=_serve, args=(reply_bytes, port), daemon=True)
    server.start()
    while not port.value:
        time.sleep(0.01)
    return server, f"http://127.0.0.1:{port.value}/v1"


def bench_settings(data_dir: Path, llm_url: str, judge_url: str, questions: int) -> Any:
    """Single at one length, its backbone at `llm_url`, judged at `judge_url`; no retries,
    no win-rate: every request one call."""
    from lilo.tasks.config import Settings

    endpoint = {"backend": "openai", "model": "bench", "api_key": "sk-bench", "retries": 0}
    return Settings(data_dir=data_dir).with_overrides(
        {
            "llm": {**endpoint, "base_url": llm_url, "concurrency": 4},
            "judge": {**endpoint, "base_url": judge_url, "concurrency": 4},
            "generate.methods": ["single"],
            "generate.target_words": [300],
            "qa.quota_single": questions,
            "qa.quota_cross": 0,
            "winrate_against": "",
        }
    )


def _seed(settings: Any, n_samples: int, questions: int) -> None:
    from lilo.tasks.records import PaperText, QAPair, Sample
    from lilo.warehouse import Warehouse

    text = "We introduce KernelForge{i}. On Kin40k, KernelForge{i} obtains a test RMSE of 0.635."
    papers = [
        PaperText(f"p{i:05d}", "K", text.format(i=i), 20, 30, "main.tex", "t", "s", f"c{i}")
        for i in range(n_samples)
    ]
    samples = [
        Sample(f"s{i:05d}", "v1", (p.paper_id,), f"topic {i}", "2601.00000", 40, "command")
        for i, p in enumerate(papers)
    ]
    pairs = [
        QAPair(f"{s.sample_id}-q{q}", s.sample_id, "single", s.paper_ids,
               f"What test RMSE does KernelForge{n} obtain on Kin40k (question {q})?",
               "A test RMSE of 0.635.", (), "approved", 1, "auto", "", "p1", "seed")
        for n, s in enumerate(samples)
        for q in range(questions)
    ]  # fmt: skip
    with Warehouse(settings.db_path) as wh:
        wh.upsert("dim_papers", papers, ("paper_id",), extra={"run_id": "seed"})
        wh.upsert("dim_samples", samples, ("sample_id",), extra={"run_id": "seed"})
        wh.upsert("fct_qa_pairs", pairs, ("qa_id",), extra={"run_id": "seed"})


def _stage(args: argparse.Namespace) -> None:
    """One stage (`args.stage`) of a recorded run, in this process."""
    from lilo.flows._run import recorded_run
    from lilo.flows.generate import generate_flow
    from lilo.flows.score import score_flow

    settings = bench_settings(args.data_dir, args.llm_url, args.judge_url, args.questions)
    if args.stage == "generate":
        _seed(settings, args.samples, args.questions)
    stage = {"generate": generate_flow, "score": score_flow}[args.stage]
    with recorded_run(settings, f"big-replies-{args.stage}") as run:
        run.stage(stage)
    print(json.dumps({"status": run.row["status"]}))


def _child(args: argparse.Namespace, stage: str, llm_url: str, judge_url: str) -> int:
    """`stage` in a fresh process; its peak RSS in bytes."""
    command = [sys.executable, "-m", "bench.big_replies", "--stage", stage,
               "--data-dir", str(args.data_dir), "--llm-url", llm_url, "--judge-url", judge_url,
               "--samples", str(args.samples), "--questions", str(args.questions)]  # fmt: skip
    child = subprocess.Popen(command, cwd=Path(__file__).resolve().parent.parent)
    _, status, usage = os.wait4(child.pid, 0)
    if os.waitstatus_to_exitcode(status):
        raise SystemExit(f"the {stage} stage exited {os.waitstatus_to_exitcode(status)}")
    return usage.ru_maxrss * 1024


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--samples", type=int, default=1)
    parser.add_argument("--questions", type=int, default=2)
    parser.add_argument("--reply-mb", type=float, default=10.0)
    parser.add_argument("--stage", choices=["generate", "score"])
    parser.add_argument("--data-dir", type=Path)
    parser.add_argument("--llm-url")
    parser.add_argument("--judge-url")
    args = parser.parse_args()
    home = Path(tempfile.mkdtemp(prefix="lilo-big-replies-")) if args.data_dir is None else None
    if home is not None:
        args.data_dir = home / "data"
        os.environ.setdefault("PREFECT_HOME", str(home / "prefect"))
    os.environ.setdefault("PREFECT_LOGGING_LEVEL", "ERROR")
    os.environ.setdefault("PREFECT_SERVER_ANALYTICS_ENABLED", "false")
    os.environ.setdefault("PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS", "120")
    if args.stage:
        _stage(args)
        return

    plain, llm_url = start_endpoint(0)
    padded, judge_url = start_endpoint(int(args.reply_mb * 1_000_000))
    _child(args, "generate", llm_url, llm_url)
    started = time.perf_counter()
    peak = _child(args, "score", llm_url, judge_url)
    wall = time.perf_counter() - started
    plain.terminate()
    padded.terminate()

    from lilo.tasks.config import Settings
    from lilo.warehouse import Warehouse

    with Warehouse(Settings(data_dir=args.data_dir).db_path) as wh:
        calls = wh.scalar("SELECT count(*) FROM fct_llm_calls WHERE stage = 'score'")
        chars = wh.scalar("SELECT sum(length(response)) FROM llm_cache")
        scores = wh.scalar("SELECT count(*) FROM fct_scores")
        status = wh.scalar("SELECT status FROM runs WHERE flow = 'big-replies-score'")
    print(f"samples={args.samples} questions={args.questions} reply_mb={args.reply_mb:g}")
    print(f"score stage: {calls} judge calls, {chars:,} reply characters cached, "
          f"{scores} score rows; run {status}; {wall:.1f} s (process)")  # fmt: skip
    print(f"peak_rss_mb={peak / 1e6:.0f}")


if __name__ == "__main__":
    main()
