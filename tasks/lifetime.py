"""How lilo's processes stop. A run stops on SIGINT (Ctrl-C) and SIGTERM (a process
supervisor's stop) the same way: the first signal sets the stop flag, so no new LLM call is
sent (`raise_if_stopping`) and no queued unit starts, ends the helper processes registered
with `on_stop`, and raises `Interrupted` in the main thread, which records the run
`interrupted`; calls in flight are abandoned, their connections shut down by a hook
(`hang_up` in tasks/bounded_http.py), so the threads reading them are free at once and a
server that stops on a disconnect stops computing them; their `.sent` log keeps them, as
after a kill. A second SIGINT ends the process at once. Exit codes: 128 + the signal (130, 143).
A run's cap (`stop_for_budget`, tasks/llm/budget.py) stops it the same way, recorded
`stopped` with what it spent, exit 3.

Child processes end with the process that started them: lilo's helpers (the offline
engine's workers, Prefect's temporary server) must not outlive a run killed with SIGKILL,
which runs no exit handler."""

from __future__ import annotations

import os
import signal
import threading
import time
from collections.abc import Callable
from types import FrameType

__all__ = [
    "BudgetSpent",
    "Interrupted",
    "budget_spent",
    "end_with_parent",
    "how_it_ended",
    "interrupt_signal",
    "on_stop",
    "raise_if_stopping",
    "stop",
    "stop_for_budget",
    "stop_on_signals",
    "stopping",
]

_STOP = threading.Event()
_SIGNAL: int = signal.SIGINT
_HOOKS: list[Callable[[], None]] = []
_BUDGET = ""  # what a run stopped by its cap spent (`stop_for_budget`)


class Interrupted(KeyboardInterrupt):
    """The run was stopped by a signal; `exit_code` is 128 + its number."""

    def __init__(self, signum: int) -> None:
        super().__init__(f"stopped by {signal.Signals(signum).name}")
        self.signum = signum
        self.exit_code = 128 + signum


class BudgetSpent(Interrupted):
    """The run was stopped by its cap (`runner.max_cost`, `runner.max_tokens`), as by a
    Ctrl-C (no new call, finished work kept) but recorded `stopped`, exit 3; `message` says
    what was spent and how to resume."""

    def __init__(self, message: str) -> None:
        super().__init__(signal.SIGINT)
        self.args = (message,)
        self.message = message
        self.exit_code = 3


def how_it_ended(returncode: int) -> str:
    """How a child process ended, as a user reads it: its exit code, or the signal that ended
    it by name (a crash is SIGSEGV, the OOM killer SIGKILL)."""
    if returncode >= 0:
        return f"exited with code {returncode}"
    try:
        return f"was ended by {signal.Signals(-returncode).name}"
    except ValueError:
        return f"was ended by signal {-returncode}"


def interrupt_signal(exc: BaseException) -> int | None:
    """The signal that `exc` stands for (Ctrl-C's KeyboardInterrupt, `Interrupted`, the
    TerminationSignal that Prefect raises for SIGTERM inside a flow run, or any exception
    once the run is stopping: what the stop broke on its way out, such as the DuckDB query
    it cut short, "Query interrupted"); None for others."""
    if isinstance(exc, Interrupted):
        return exc.signum
    if _STOP.is_set():
        return _SIGNAL
    if isinstance(exc, KeyboardInterrupt):
        return signal.SIGINT
    signum = getattr(exc, "signal", None)  # prefect.exceptions.TerminationSignal
    if isinstance(signum, int) and not isinstance(exc, Exception):
        return signum
    return None


def stopping() -> bool:
    return _STOP.is_set()


def raise_if_stopping() -> None:
    """Called before each new LLM call is sent and each queued unit starts."""
    if _STOP.is_set():
        raise BudgetSpent(_BUDGET) if _BUDGET else Interrupted(_SIGNAL)


def stop_for_budget(message: str) -> Interrupted:
    """Stop the run as its cap says (`message`: what was spent, how to resume); the stop
    to raise. A stop already under way (a signal, the cap reached in another thread) keeps
    its own reason."""
    global _BUDGET
    if not _STOP.is_set():
        _BUDGET = message
        stop(signal.SIGINT)
    return BudgetSpent(_BUDGET) if _BUDGET else Interrupted(_SIGNAL)


def budget_spent(exc: BaseException) -> str | None:
    """What a run stopped by its cap spent, where `exc` is (or came of) that stop."""
    if isinstance(exc, BudgetSpent):
        return exc.message
    return _BUDGET or None


def on_stop(hook: Callable[[], None]) -> None:
    """`hook` runs once when the run stops (ends a helper process); it must not block."""
    _HOOKS.append(hook)


def stop(signum: int = signal.SIGINT) -> None:
    """Set the stop flag and run the hooks, once; later calls do nothing."""
    global _SIGNAL
    if _STOP.is_set():
        return
    _SIGNAL = signum
    _STOP.set()
    for hook in _HOOKS:
        try:
            hook()
        except Exception:  # noqa: S110 (a helper that is already gone needs no ending)
            pass


def stop_on_signals() -> None:
    """In the main thread of a command that runs flows: SIGINT and SIGTERM stop the run.
    Inside a flow run Prefect's own SIGTERM handler raises its TerminationSignal instead of
    `Interrupted`; whoever catches it calls `stop` (`tasks.parallel`, flows/_run.py)."""
    signal.signal(signal.SIGINT, _on_signal)
    signal.signal(signal.SIGTERM, _on_signal)


def _on_signal(signum: int, frame: FrameType | None) -> None:
    if _STOP.is_set():
        if signum == signal.SIGINT:  # a second Ctrl-C: now
            os._exit(128 + signum)
        return  # the stop is under way (Prefect sends its SIGTERM again as it unwinds)
    stop(signum)
    raise Interrupted(signum)


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
