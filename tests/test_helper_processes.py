"""lilo's helper processes: Prefect's temporary server as a terminal command starts it
(flows/cli/_server.py), the offline engine's worker processes (tasks/llm/offline/_process.py:
the same answers as in-process), both ending with a parent killed by SIGKILL
(tasks/lifetime.py), and how lilo says that a helper ended."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from lilo.flows.cli import _server
from lilo.tasks.config import Settings
from lilo.tasks.lifetime import how_it_ended
from lilo.tasks.llm.offline import OfflineEngine
from lilo.tasks.llm.offline._process import _pool

_PROBE = """
import sys
from pathlib import Path
import httpx
from lilo.flows.cli import _prefect, _server
_prefect.quiet_prefect()  # as the command does first: its start-up timeout among them
_server.start(Path(sys.argv[1]))
url, log = _server.wait(), _server._LOG
print(url, httpx.get(url + "/health").json(), log.exists())
_server.stop()
print(log.exists())
"""


@pytest.mark.e2e  # Prefect's temporary server started by lilo in a subprocess
@pytest.mark.slow
def test_a_started_server_answers_and_a_configured_one_is_used(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PREFECT_API")}
    env["PREFECT_HOME"] = str(tmp_path / "prefect")  # a new one: its database is migrated
    env["PREFECT_SERVER_ANALYTICS_ENABLED"] = "false"
    done = subprocess.run(
        [sys.executable, "-c", _PROBE, str(tmp_path / "data")],
        env=env, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("http://127.0.0.1:")
    assert done.stdout.split()[1:] == ["True", "True", "False"]  # its log, removed at the end
    # what the server prints goes to that log; lilo says only that it waits, when it does
    waited = "lilo: starting Prefect's temporary server"
    assert all(line.startswith(waited) for line in done.stderr.splitlines()), done.stderr

    # A configured server is used: nothing is started (first, the one an earlier command of
    # this test process may have started, with no API configured, is stopped).
    _server.stop()
    monkeypatch.setenv("PREFECT_API_URL", "http://127.0.0.1:4200/api")
    _server.start(tmp_path / "data")
    assert _server._PROCESS is None and _server.wait() == ""


@pytest.mark.e2e  # Prefect's temporary server started by lilo in a subprocess
@pytest.mark.slow
def test_a_server_that_fails_to_start_is_named_with_its_output(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PREFECT_API")}
    env["PREFECT_HOME"] = str(tmp_path / "prefect")
    env["PREFECT_API_DATABASE_CONNECTION_URL"] = f"sqlite+aiosqlite:///{tmp_path}/no/such/x.db"
    probe = (
        "import sys\nfrom pathlib import Path\nfrom lilo.flows.cli import _server\n"
        "from lilo.tasks.errors import Unavailable\n"
        "_server.start(Path(sys.argv[1]))\ntry:\n    _server.wait()\n"
        "except Unavailable as exc:\n    print(exc)"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe, str(tmp_path / "data")],
        env=env, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert done.stdout.startswith("Prefect's temporary server exited with code"), done.stderr
    log = Path(done.stdout.split("(its output: ")[1].split(")")[0])
    assert log.parent == tmp_path / "data" / "tmp"  # the next run's sweep removes it
    assert "unable to open database file" in log.read_text()


def test_worker_processes_reply_as_the_calling_thread_does(tmp_path: Path) -> None:
    base = Settings(data_dir=tmp_path)
    inline = OfflineEngine(base.llm.model, base.llm.offline.model_copy(update={"processes": 0}))
    pooled = OfflineEngine(base.llm.model, base.llm.offline)
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


_KILLED_PARENT = """
import os, signal, subprocess, sys
child = subprocess.Popen([sys.executable, "-c",
    "import time; from lilo.tasks.lifetime import end_with_parent; "
    f"end_with_parent({os.getpid()}, interval_s=0.1); print('watching', flush=True); "
    "time.sleep(60)"], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
assert child.stdout.readline() == "watching\\n"  # alive, its parent watched
print(child.pid, flush=True)
os.kill(os.getpid(), signal.SIGKILL)  # no exit handler runs
"""


def test_helpers_end_with_a_killed_parent() -> None:
    done = subprocess.run(
        [sys.executable, "-c", _KILLED_PARENT], capture_output=True, text=True, timeout=30
    )
    child = int(done.stdout.split()[0])
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and Path(f"/proc/{child}").exists():
        if "Z" in Path(f"/proc/{child}/stat").read_text().split(")")[1][:3]:
            break  # a zombie: it ended, and waits for init to reap it
        time.sleep(0.1)
    alive = (
        Path(f"/proc/{child}").exists()
        and "Z" not in Path(f"/proc/{child}/stat").read_text().split(")")[1][:3]
    )
    assert not alive, f"the child {child} outlived its killed parent"


def test_how_a_helper_ended_is_said_by_its_exit_code_or_its_signal_s_name() -> None:
    """What the errors of lilo's servers say of a process that ended (flows/cli/_server.py,
    flows/cli/_local_model.py): a crash by its signal's name, not a negative code."""
    ends = {
        "raise SystemExit(3)": "exited with code 3",
        "import os, signal; os.kill(os.getpid(), signal.SIGSEGV)": "was ended by SIGSEGV",
        "import os, signal; os.kill(os.getpid(), signal.SIGKILL)": "was ended by SIGKILL",
    }
    for program, said in ends.items():
        done = subprocess.run([sys.executable, "-c", program], capture_output=True, timeout=60)
        assert how_it_ended(done.returncode) == said
