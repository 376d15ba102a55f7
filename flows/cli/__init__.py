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
    parser = argparse.ArgumentParser(
        prog="lilo",
        description="Long-In, Long-Out: build long-input/long-output benchmarks and score methods.",
    )
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for info in sorted(pkgutil.iter_modules(__path__), key=lambda i: i.name):
        if not info.name.startswith("_"):
            importlib.import_module(f"{__name__}.{info.name}").register(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    from pydantic import ValidationError

    from warehouse import WarehouseBusy

    args = _parser().parse_args(argv)
    _quiet_prefect()
    try:
        return int(args.func(args))
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in exc.errors(include_url=False)
        )
        print(f"lilo: invalid settings: {problems} (see tasks/config.py)", file=sys.stderr)
    except WarehouseBusy as exc:
        print(f"lilo: {exc}", file=sys.stderr)
    return 2
