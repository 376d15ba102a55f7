"""`lilo`: one-off runs from a terminal. Every command runs the same Prefect flows that the
deployments run, or a pure task; nothing here computes.

Each module in this package is one group of commands with a `register(subparsers)`
function; adding a command is adding a module.
"""

from __future__ import annotations

import argparse
import importlib
import logging
import os
import pkgutil
import sys
from typing import Any

from flows.cli._common import CLIError, Parser

__all__ = ["main"]


def _quiet_prefect() -> None:
    """Prefect's own chatter off for terminal runs; lilo's stage lines stay (and reach the UI)."""
    defaults = {
        "PREFECT_LOGGING_LEVEL": "WARNING",
        "PREFECT_LOGGING_EXTRA_LOGGERS": "lilo",
        "PREFECT_SERVER_ANALYTICS_ENABLED": "false",
        "PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS": "90",
        "HF_HUB_OFFLINE": "1",
        "TOKENIZERS_PARALLELISM": "false",
        "TRANSFORMERS_VERBOSITY": "error",
    }
    for key, value in defaults.items():
        os.environ.setdefault(key, value)
    logging.getLogger("lilo").setLevel(logging.INFO)


def _parser() -> argparse.ArgumentParser:
    parser = Parser(
        prog="lilo",
        description="Long-In, Long-Out: build long-input/long-output benchmarks and score methods.",
    )
    parser.add_argument("--debug", action="store_true", help="show the traceback of an error")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for info in sorted(pkgutil.iter_modules(__path__), key=lambda i: i.name):
        if not info.name.startswith("_"):
            importlib.import_module(f"{__name__}.{info.name}").register(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    """Run one command. A mistake is one `lilo: ...` line on stderr and a non-zero exit
    (2 for bad input, 1 for a run or lookup that failed); `--debug` raises instead."""
    try:
        args = _parser().parse_args(argv)
    except SystemExit as exc:  # --help, or a usage mistake already printed as one line
        return int(exc.code or 0)
    _quiet_prefect()
    try:
        return int(args.func(args))
    except KeyboardInterrupt:
        print("lilo: interrupted", file=sys.stderr)
        return 130
    except Exception as exc:
        if args.debug:
            raise
        message, code = _explain(exc)
        print(f"lilo: {' '.join(message.split())}", file=sys.stderr)
        return code


def _explain(exc: Exception) -> tuple[str, int]:
    """The line to print for an error, and the exit code."""
    from pydantic import ValidationError

    from flows._preflight import PreflightError
    from flows._run import RunFailed
    from tasks.config import ConfigError
    from warehouse import WarehouseBusy

    if isinstance(exc, CLIError):
        return str(exc), exc.code
    if isinstance(exc, ValidationError):
        errors = exc.errors(include_url=False)
        # An item out of range also empties its list: the item's error says it all.
        problems = "; ".join(
            _problem(e)
            for e in errors
            if not (e["type"] == "too_short" and any(len(o["loc"]) > len(e["loc"]) for o in errors))
        )
        return f"invalid settings: {problems} (see tasks/config.py)", 2
    if isinstance(exc, ConfigError):
        return str(exc), 2
    if isinstance(exc, (PreflightError, RunFailed, WarehouseBusy)):
        return str(exc), 1
    return f"{type(exc).__name__}: {exc} (run again with --debug for the traceback)", 1


def _problem(error: Any) -> str:
    where = ".".join(map(str, error["loc"]))
    value = error.get("input")
    shown = (
        f" = {value!r}" if isinstance(value, int | float | str) and len(repr(value)) < 40 else ""
    )
    return f"{where}{shown}: {error['msg'].removeprefix('Value error, ')}"
