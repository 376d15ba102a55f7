"""Prefect's temporary server as a terminal command starts it (flows/cli/_server.py), and the
offline engine's worker processes (tasks/llm/offline/_process.py): real processes, the same
answers as in-process."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from flows.cli import _server
from tasks.config import Settings
from tasks.llm.offline import OfflineEngine
from tasks.llm.offline._process import _pool

_PROBE = """
import httpx
from flows.cli import _server
_server.start()
url = _server.wait()
print(url, httpx.get(url + "/health").json())
"""


def test_a_started_server_answers_and_a_configured_one_is_used(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PREFECT_API")}
    env["PREFECT_HOME"] = str(tmp_path / "prefect")  # a new one: its database is migrated
    env["PREFECT_SERVER_ANALYTICS_ENABLED"] = "false"
    done = subprocess.run(
        [sys.executable, "-c", _PROBE], env=env, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("http://127.0.0.1:") and done.stdout.split()[1] == "True"

    # A configured server is used: nothing is started.
    monkeypatch.setenv("PREFECT_API_URL", "http://127.0.0.1:4200/api")
    _server.start()
    assert _server._PROCESS is None and _server.wait() == ""


def test_worker_processes_reply_as_the_calling_thread_does(tmp_path: Path) -> None:
    base = Settings(data_dir=tmp_path)
    inline = OfflineEngine(base.with_overrides({"llm.offline.processes": 0}))
    pooled = OfflineEngine(base)
    assert pooled.fingerprint() == inline.fingerprint()
    assert base.config_hash() == base.with_overrides({"llm.offline.processes": 0}).config_hash()
    prompts = [
        "Write a summary of about 400 words of the following papers.\n\n<paper 1>\nKernelForge "
        "learns kernels for Gaussian processes. It reaches a test RMSE of 0.635 on Kin40k."
        "\n</paper 1>",
        "Evaluate the answer.\n<question>What RMSE?</question>\n<gold>0.635</gold>\n"
        "<predict>0.635</predict>\nReply as JSON with reason and score.",
    ]
    for prompt in prompts:
        messages = [{"role": "user", "content": prompt}]
        want = inline.complete(messages, temperature=0.3, max_tokens=512)
        assert pooled.complete(messages, temperature=0.3, max_tokens=512) == want
    pool = _pool(2)
    assert pool is not None and all(p.pid != os.getpid() for p in pool._processes.values())
