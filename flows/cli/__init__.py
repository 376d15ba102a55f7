"""`lilo`: one-off runs from a terminal. Every command runs the same Prefect flows that the
deployments run, or a pure task; nothing here computes.

Each module in this package is one group of commands with a `register(subparsers)`
function; adding a command is adding a module.
"""

from lilo.flows.cli._main import console_main, main

__all__ = ["console_main", "main"]
