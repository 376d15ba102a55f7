"""Prefect's temporary API server, started as a command's first step.

A flow run with no PREFECT_API_URL makes Prefect start a temporary server when the first
flow begins: uvicorn serving `prefect.server.api.server:create_app` in a process of its own,
a few seconds on a used PREFECT_HOME and more on a new one, whose database is migrated first
(docs/design.md §13). A command that will run flows starts that same server, with Prefect's own
command and environment, before it imports Prefect or prepares its work, so the server
starts alongside them; `wait` points Prefect at it once it answers. At exit it is sent
SIGTERM and left to finish its shutdown on its own, as the terminal returns; it also stops
by itself once lilo's process is gone (killed with SIGKILL). What it prints goes to a
temporary log under the data dir, not the terminal (a server stopped early prints
tracebacks of services it had not started yet): removed at exit, named in the error when
the server fails to start, swept by the next run when lilo was killed.
"""

from __future__ import annotations

import atexit
import importlib.util
import os
import socket
import subprocess
import sys
import time
from pathlib import Path

__all__ = ["start", "stop", "wait"]

# `python -m uvicorn ARGS`, as Prefect runs it, ending with lilo even when lilo is killed.
_SERVE = (
    "import sys; from lilo.tasks.lifetime import end_with_parent; "
    "end_with_parent(int(sys.argv.pop(1))); sys.argv[0] = 'uvicorn'; "
    "from uvicorn.main import main; main()"
)
_PROCESS: subprocess.Popen[bytes] | None = None
_URL = ""
_LOG: Path | None = None
_MADE: list[Path] = []  # the folders made for its log, removed with it if left empty
_QUIET_S = 5.0  # a start longer than this is said on stderr


def start(data_dir: Path) -> None:
    """Start the server unless PREFECT_API_URL names one (environment, profile or
    Prefect's settings files) or ephemeral servers are off; once per process. Its log is
    a temporary in `data_dir/tmp` (tasks/files.py)."""
    global _PROCESS, _URL, _LOG
    if _PROCESS is not None or os.environ.get("PREFECT_API_URL") or _configured(loaded=True):
        return
    spec = importlib.util.find_spec("prefect")
    if spec is None or spec.origin is None:
        return
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    from lilo.tasks.files import folders_to_make, temp_path

    _MADE[:] = folders_to_make(data_dir)
    _LOG = temp_path(data_dir, "prefect-server")
    log = open(_LOG, "xb")  # noqa: SIM115  # the server's output until it stops
    _PROCESS = subprocess.Popen(
        [
            sys.executable,
            "-c",
            _SERVE,
            str(os.getpid()),
            "--app-dir",
            str(Path(spec.origin).parent.parent),
            "--factory",
            "prefect.server.api.server:create_app",
            "--host",
            "127.0.0.1",
            "--port",
            str(port),
            "--log-level",
            "error",
            "--lifespan",
            "on",
        ],
        # What Prefect's SubprocessASGIServer sets: no UI, services for a temporary server.
        # Analytics off too: a temporary server, often offline, has nothing to report.
        env={
            **os.environ,
            "PREFECT_SERVER_ANALYTICS_ENABLED": "false",
            "PREFECT_UI_ENABLED": "0",
            "PREFECT__SERVER_EPHEMERAL": "1",
            "PREFECT__SERVER_FINAL": "1",
        },
        # Its own process group: a terminal's Ctrl-C (or a group's SIGTERM) reaches lilo,
        # which records the run through this server before it ends it.
        start_new_session=True,
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    log.close()  # the server writes through its own copy
    _URL = f"http://127.0.0.1:{port}/api"
    atexit.register(stop)
    # A server named in a profile or settings file is only known once Prefect's settings
    # load (a second's import): then this one is not needed.
    if _configured(loaded=False):
        stop()


def _configured(*, loaded: bool) -> bool:
    """Whether Prefect's settings name an API (or forbid a temporary server); with `loaded`,
    only when they are imported already, as they are under a test harness."""
    if loaded and "prefect.settings" not in sys.modules:
        return False
    from prefect.settings import PREFECT_API_URL, PREFECT_SERVER_EPHEMERAL_ENABLED

    return bool(PREFECT_API_URL.value()) or not PREFECT_SERVER_EPHEMERAL_ENABLED.value()


def wait() -> str:
    """The started server's API address once it answers /health ("" when none was
    started, or when Prefect's settings name an API now: a later command in the same
    process, under a test harness, reports there); a server that exits or does not answer
    in time is Unavailable, with what to do."""
    if _PROCESS is None or _configured(loaded=True):
        return ""
    import requests
    from prefect.settings import PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS

    started = time.monotonic()
    deadline = started + PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS.value()
    said = False
    with requests.Session() as session:
        while time.monotonic() < deadline:
            if _PROCESS.poll() is not None:
                break
            if not said and time.monotonic() - started > _QUIET_S:
                said = True  # a slow machine takes tens of seconds: say what the wait is
                print(
                    "lilo: starting Prefect's temporary server (PREFECT_API_URL set to a "
                    "running server skips this) ...",
                    file=sys.stderr,
                    flush=True,
                )
            try:
                if session.get(f"{_URL}/health", timeout=2.0).status_code == 200:
                    return _URL
            except requests.RequestException:
                pass
            time.sleep(0.05)
    from lilo.tasks.errors import Unavailable
    from lilo.tasks.lifetime import how_it_ended

    code, log = _PROCESS.poll(), _LOG
    stop(keep_log=True)
    raise Unavailable(
        "Prefect's temporary server "
        + (how_it_ended(code) if code is not None else "did not answer in time")
        + f" (its output: {log}): start one with `prefect server start` and set "
        "PREFECT_API_URL to it, or raise PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS"
    )


def stop(*, keep_log: bool = False) -> None:
    """SIGTERM to the server, not waited for; its log removed unless `keep_log`, and the
    folders made for it if nothing else is in them (a run that failed before writing)."""
    global _PROCESS, _URL, _LOG
    if _PROCESS is not None and _PROCESS.poll() is None:
        _PROCESS.terminate()
    if _LOG is not None and not keep_log:
        from lilo.tasks.files import remove_if_empty

        _LOG.unlink(missing_ok=True)
        remove_if_empty(_MADE)
    _PROCESS, _URL, _LOG = None, "", None
