"""Limits per endpoint and model: a generator and a judge on one loopback server each get
their own concurrency and rate limits (measured at the server, rates on a fake clock), and
two clients that name different limits for one endpoint and model are refused."""

from __future__ import annotations

import threading
import time
from concurrent.futures import ThreadPoolExecutor
from types import SimpleNamespace

import pytest
from pydantic import ValidationError

from lilo.tasks.llm import limits, make_client, make_judge_client
from tests.llm_server import LLMServer


class FakeClock:
    """The rate limiter's clock: `sleep` moves it on at once."""

    def __init__(self) -> None:
        self.now = 1000.0
        self.lock = threading.Lock()

    def monotonic(self) -> float:
        with self.lock:
            return self.now

    def sleep(self, seconds: float) -> None:
        with self.lock:
            self.now += seconds


def test_generator_and_judge_on_one_server_keep_their_own_limits(tmp_path, monkeypatch):
    clock = FakeClock()
    monkeypatch.setattr(
        limits, "time", SimpleNamespace(monotonic=clock.monotonic, sleep=clock.sleep)
    )
    in_flight = {"gen": 0, "judge": 0}
    peak = {"gen": 0, "judge": 0}
    sent: dict[str, list[float]] = {"gen": [], "judge": []}
    lock = threading.Condition()

    def respond(prompt: str, n: int) -> str:
        who = prompt.split()[0]
        with lock:
            in_flight[who] += 1
            peak[who] = max(peak[who], in_flight[who])
            sent[who].append(clock.monotonic())
            lock.notify_all()
            # Until the generator's limit has been reached once, a request is held (at most
            # 2 s) while others pile up: on a loaded machine 0.05 s alone may not overlap 8.
            if who == "gen":
                lock.wait_for(lambda: peak["gen"] >= 8, timeout=2.0)
        time.sleep(0.05)  # a real request takes a while: others pile up meanwhile
        with lock:
            in_flight[who] -= 1
        return f"reply to {prompt}"

    with LLMServer() as server:
        server.respond = respond
        endpoint = {"backend": "openai", "base_url": server.base_url, "api_key": "sk-test"}
        settings = server.settings(
            tmp_path,
            **{
                "llm": {**endpoint, "model": "generator", "concurrency": 8, "retries": 0},
                "judge": {**endpoint, "model": "judge", "concurrency": 1, "rpm": 10},
            },
        )
        generator, judge = make_client(settings), make_judge_client(settings)

        def ask(client, who: str, i: int) -> str:
            return client.chat([{"role": "user", "content": f"{who} {i}"}], purpose=who)

        with ThreadPoolExecutor(32) as pool:
            jobs = [pool.submit(ask, generator, "gen", i) for i in range(48)]
            jobs += [pool.submit(ask, judge, "judge", i) for i in range(25)]
            for job in jobs:
                job.result()

    busiest_minute = max(sum(1 for u in sent["judge"] if t <= u < t + 60.0) for t in sent["judge"])
    span = max(sent["judge"]) - min(sent["judge"])
    print(f"\nin flight at most: generator {peak['gen']}, judge {peak['judge']}")
    print(f"judge: {busiest_minute} requests in its busiest minute, 25 over {span:.0f} s")
    assert peak == {"gen": 8, "judge": 1}
    assert busiest_minute == 10
    assert span >= 120.0  # 25 requests at 10 a minute: the 21st starts 2 minutes in
    assert len(sent["gen"]) == 48


def test_different_limits_for_one_endpoint_and_model_are_refused(tmp_path):
    endpoint = {"backend": "openai", "base_url": "http://127.0.0.1:1/v1", "model": "m"}
    with LLMServer() as server:
        with pytest.raises(ValidationError, match="different limits") as refused:
            server.settings(
                tmp_path,
                llm={**endpoint, "concurrency": 8},
                judge={**endpoint, "concurrency": 1, "rpm": 10},
            )
    message = str(refused.value.errors()[0]["msg"])
    assert "\n" not in message
    assert "concurrency 8, rpm 0, tpm 0 vs concurrency 1, rpm 10, tpm 0" in message


def test_the_refusal_is_one_line_and_exit_2(tmp_path, capsys):
    from lilo.flows.cli import main

    options = ["--set", "judge.backend=offline", "--set", "judge.concurrency=1"]
    code = main(["run", "--survey", "2301.00001", "--data-dir", str(tmp_path), *options])
    err = capsys.readouterr().err
    assert code == 2 and len(err.strip().splitlines()) == 1
    assert err.startswith("lilo: invalid settings: llm and judge call offline-extractive-v1")
