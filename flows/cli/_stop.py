"""One way for every command to stop on SIGINT or SIGTERM (tasks/lifetime.py): `lilo run`,
`demo`, `review`, `import`, `discover` and `probe` wrap their work in `stoppable`."""

from __future__ import annotations

import argparse
import functools
import logging
import os
import signal
import sys
import traceback
from collections.abc import Callable

from lilo.flows.cli import _server

__all__ = ["stoppable"]


def stoppable(command: Callable[[argparse.Namespace], int]) -> Callable[[argparse.Namespace], int]:
    """A run stopped by SIGINT or SIGTERM (tasks/lifetime.py): one line saying so and how to
    resume, its helpers ended, and exit 128 + the signal at once (stopped by its cap: exit 3),
    abandoning the LLM calls in flight (their `.sent` log keeps them for the next run's
    ledger)."""

    @functools.wraps(command)
    def run(args: argparse.Namespace) -> int:
        from lilo.tasks import lifetime

        lifetime.stop_on_signals()
        lifetime.on_stop(_quiet_console)
        try:
            return command(args)
        except BaseException as exc:
            signum = lifetime.interrupt_signal(exc)
            if signum is None:
                raise
            try:  # the terminal may be gone: whatever happens here, the process ends
                if args.debug:
                    traceback.print_exc()
                lifetime.stop(signum)
                spent = lifetime.budget_spent(exc)
                print(
                    f"lilo: the run is recorded `stopped`, {spent}"
                    if spent
                    else f"lilo: interrupted by {signal.Signals(signum).name}: the run is "
                    "recorded `interrupted`, its finished work kept; run the same command "
                    "again to resume",
                    file=sys.stderr,
                    flush=True,
                )
                _server.stop()
                sys.stdout.flush()
            finally:
                os._exit(3 if spent else 128 + signum)

    return run


def _quiet_console() -> None:
    """Once a run stops, the console shows lilo's lines only: Prefect's crash reports of
    the stopped task and flow runs still reach the runs' logs in the UI."""
    for name in ("", "prefect", "lilo"):
        for handler in logging.getLogger(name).handlers:
            if isinstance(handler, logging.StreamHandler):
                handler.addFilter(lambda record: record.name.startswith("lilo"))
