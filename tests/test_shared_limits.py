"""Endpoint-wide limits on a Prefect server (flows/_shared_limits.py): without a configured
server, or with `llm.shared_limits = off`, only the per-process limits hold; a server that
cannot be reached is said in one line and the requests still go; with a real server
(`prefect server start`, slow), two worker processes against one loopback endpoint stay
within `llm.concurrency` in flight and within the rate limit's rule: over any window of
W seconds at most 1 + rpm * W / 60 requests."""

from __future__ import annotations

import contextlib
import logging
import os
import signal
import socket
import subprocess
import sys
import textwrap
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from lilo.flows import _shared_limits as shared_module
from lilo.flows._shared_limits import limit_names, shared_limits_for
from lilo.tasks.llm import make_client
from lilo.tasks.llm.limits import Limits
from tests.llm_server import LLMServer

SERVER_START_S = 600  # `prefect server start` is slow on a loaded machine
WINDOW_S = 10.0  # how long the workers send: the rule below over this window
RPM, CONCURRENCY = 120, 4


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_limit_names_are_the_endpoint_and_model_sanitised():
    names = limit_names("http://127.0.0.1:8000/v1", "org/Model 7B")
    assert names == ("lilo-127.0.0.1:8000-org-Model-7B", "lilo-127.0.0.1:8000-org-Model-7B-rpm")


def test_no_configured_server_or_off_keeps_per_process_limits(monkeypatch):
    monkeypatch.delenv("PREFECT_API_URL", raising=False)
    monkeypatch.setattr(shared_module, "configured_api", lambda: "")
    limits = Limits(4, 120)
    assert shared_limits_for("openai:http://127.0.0.1:1/v1", "m", limits, "auto") is None
    monkeypatch.setattr(shared_module, "configured_api", lambda: "http://127.0.0.1:1/api")
    assert shared_limits_for("openai:http://127.0.0.1:1/v1", "m", limits, "off") is None
    assert shared_limits_for("offline:", "m", limits, "auto") is None


def test_an_unreachable_server_falls_back_to_per_process_limits_in_one_line(
    tmp_path, monkeypatch, caplog
):
    from prefect.settings import PREFECT_API_URL, PREFECT_CLIENT_MAX_RETRIES, temporary_settings

    api = f"http://127.0.0.1:{_free_port()}/api"  # nothing listens
    monkeypatch.setenv("PREFECT_API_URL", api)
    caplog.set_level(logging.WARNING, logger="lilo")
    with (
        temporary_settings(updates={PREFECT_API_URL: api, PREFECT_CLIENT_MAX_RETRIES: 0}),
        LLMServer() as server,
    ):
        settings = server.settings(tmp_path).with_overrides({"llm": {"rpm": 120}})
        client = make_client(settings)
        for n in range(3):
            client.chat([{"role": "user", "content": f"q{n}"}], purpose="test")
    assert server.answered == 3
    lines = [r.getMessage() for r in caplog.records if "fall back to per-process" in r.getMessage()]
    assert len(lines) == 1, lines
    assert api in lines[0]


WORKER = textwrap.dedent(
    """
    import sys, time
    from concurrent.futures import ThreadPoolExecutor
    from pathlib import Path
    import lilo.flows._units  # what a worker runs: importing it provides the shared limits
    from lilo.tasks.config import Settings
    from lilo.tasks.llm import make_client

    base_url, data_dir, name, window, mode, concurrency, rpm = sys.argv[1:8]
    llm = {"backend": "openai", "model": "scripted", "api_key": "sk-test", "retries": 0,
           "base_url": base_url, "concurrency": int(concurrency), "rpm": int(rpm),
           "shared_limits": mode}
    client = make_client(Settings(data_dir=Path(data_dir)).with_overrides({"llm": llm}))
    end = time.monotonic() + float(window)

    def send(thread):
        n = 0
        while time.monotonic() < end:
            client.chat([{"role": "user", "content": f"{name}-{thread}-{n}"}], purpose="t")
            n += 1

    with ThreadPoolExecutor(8) as pool:
        list(pool.map(send, range(8)))
    """
)


@pytest.fixture(scope="module")
def prefect_api(tmp_path_factory) -> Iterator[dict[str, str]]:
    with prefect_server(tmp_path_factory.mktemp("prefect-home")) as env:
        yield env


@contextlib.contextmanager
def prefect_server(home: Path) -> Iterator[dict[str, str]]:
    """`prefect server start` on a free loopback port, PREFECT_HOME in `home`; the
    environment that points a process at it."""
    port = str(_free_port())
    env = {**os.environ, "PREFECT_HOME": str(home), "PREFECT_API_URL": f"http://127.0.0.1:{port}/api",
           "PREFECT_SERVER_ANALYTICS_ENABLED": "false", "PREFECT_UI_ENABLED": "false"}  # fmt: skip
    log = home / "server.log"
    with log.open("wb") as out:
        server = subprocess.Popen(
            [sys.executable, "-m", "prefect", "server", "start"]
            + ["--host", "127.0.0.1", "--port", port],
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    try:
        deadline = time.monotonic() + SERVER_START_S
        while True:
            with contextlib.suppress(httpx.HTTPError):
                if httpx.get(f"{env['PREFECT_API_URL']}/health", timeout=5).status_code == 200:
                    break
            assert server.poll() is None, log.read_text(errors="replace")[-2000:]
            assert time.monotonic() < deadline, "the Prefect server did not start"
            time.sleep(1)
        yield env
    finally:
        os.killpg(server.pid, signal.SIGTERM)
        server.wait(timeout=30)


def run_workers(
    server: LLMServer, env: dict[str, str], data_dir: Path, mode: str, window_s: float = WINDOW_S
) -> None:
    """Two worker processes sending to `server` for `window_s` seconds, 8 threads each."""
    workers = [
        subprocess.Popen(
            [sys.executable, "-c", WORKER, server.base_url, str(data_dir / name), name]
            + [str(window_s), mode, str(CONCURRENCY), str(RPM)],
            env=env,
        )
        for name in ("w1", "w2")
    ]
    for worker in workers:
        assert worker.wait(timeout=window_s + 300) == 0


def most_in_window(arrivals: list[float], window_s: float) -> int:
    """The most requests that arrived within any `window_s` seconds."""
    times, most, first = sorted(arrivals), 0, 0
    for last, t in enumerate(times):
        while t - times[first] > window_s:
            first += 1
        most = max(most, last - first + 1)
    return most


@pytest.mark.slow  # a Prefect server and two worker processes
def test_two_workers_share_the_endpoint_s_limits(prefect_api, tmp_path):
    with LLMServer() as server:
        server.compute_s = 0.2
        run_workers(server, prefect_api, tmp_path, "auto")
    assert server.answered > 10
    assert server.peak <= CONCURRENCY
    assert most_in_window(server.arrivals, WINDOW_S) <= 1 + RPM * WINDOW_S / 60
