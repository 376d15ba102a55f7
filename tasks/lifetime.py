"""Child processes that end with the process that started them: lilo's helpers (the offline
engine's workers, Prefect's temporary server) must not outlive a run killed with SIGKILL,
which runs no exit handler."""

from __future__ import annotations

import os
import signal
import threading
import time

__all__ = ["end_with_parent"]


def end_with_parent(parent: int, *, interval_s: float = 1.0) -> None:
    """In a child process: once `parent` is no longer its parent, it sends itself SIGTERM
    (a server shuts down as on a terminal's stop). SIGINT is left to the parent, which
    ends its children when a user presses Ctrl-C."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(interval_s)
        os.kill(os.getpid(), signal.SIGTERM)

    threading.Thread(target=watch, name="end-with-parent", daemon=True).start()
