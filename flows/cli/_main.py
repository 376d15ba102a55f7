"""`lilo`'s entry points: the parser built from the command modules of this package, and
errors turned into one line and an exit code."""

from __future__ import annotations

import argparse
import gc
import os
import sys
import traceback
from typing import Any

from lilo.flows.cli._args import Parser
from lilo.flows.cli._prefect import quiet_prefect
from lilo.tasks.errors import LiloError
from lilo.tasks.registry import import_modules

__all__ = ["console_main", "main"]


def _parser() -> argparse.ArgumentParser:
    parser = Parser(
        prog="lilo",
        description="Long-In, Long-Out: build long-input/long-output benchmarks and score methods.",
    )
    parser.add_argument("--debug", action="store_true", help="show the traceback of an error")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for commands in import_modules(__package__):
        commands.register(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    """Run one command. A mistake is one `lilo: ...` line on stderr and a non-zero exit
    (2 for bad input, 1 for a run or lookup that failed: see tasks/errors.py); `--debug`
    shows the traceback first and exits with the same code."""
    quiet_prefect()
    try:
        args = _parser().parse_args(argv)
    except SystemExit as exc:  # --help, or a usage mistake already printed as one line
        return int(exc.code or 0)
    try:
        return int(args.func(args))
    except KeyboardInterrupt:
        print("lilo: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:  # `lilo leaderboard | head`: the reader has what it wanted
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 1
    except Exception as exc:
        if args.debug:
            traceback.print_exc()
        from lilo.tasks.printable import printable
        from lilo.tasks.redact import redact

        message, code = _explain(exc)  # may quote an endpoint, a paper or a file
        print(f"lilo: {printable(redact(message), one_line=True)}", file=sys.stderr)
        return code


def console_main() -> int:
    """`lilo` as a process (the installed command, `python -m lilo.flows.cli`): `main()`,
    then what the command left collected once and the rest frozen, so that the interpreter's
    exit does not walk every object of torch, Prefect and Great Expectations again in its
    last collections (`python -m bench.command_exit` measures what it saves).
    In-process callers (tests, notebooks) call `main()`."""
    code = main()
    gc.collect()  # garbage with finalizers (an open file in a cycle) is finalized, as before
    gc.freeze()
    return code


def _explain(exc: Exception) -> tuple[str, int]:
    """The line to print for an error, and the exit code (the exception's own, for lilo's)."""
    from pydantic import ValidationError

    if isinstance(exc, ValidationError) and exc.title in _settings_models():  # bad input
        errors = exc.errors(include_url=False)
        # An item out of range also empties its list: the item's error says it all.
        problems = "; ".join(
            _problem(e)
            for e in errors
            if not (e["type"] == "too_short" and any(len(o["loc"]) > len(e["loc"]) for o in errors))
        )
        return f"invalid settings: {problems} (see tasks/config.py)", 2
    code = exc.exit_code if isinstance(exc, LiloError) else 1
    if isinstance(exc, LiloError) and exc.complete:
        return str(exc), code
    return f"{type(exc).__name__}: {exc} (run again with --debug for the traceback)", code


def _settings_models() -> set[str]:
    """The names of the settings models (`Settings` and every `Section`): only their
    validation errors are invalid settings; any other model's is lilo's own failure."""
    from lilo.tasks.config import Section, Settings

    names, todo = {Settings.__name__}, [Section]
    while todo:
        model = todo.pop()
        names.add(model.__name__)
        todo += model.__subclasses__()
    return names


def _problem(error: Any) -> str:
    where = ".".join(map(str, error["loc"]))
    value = error.get("input")
    shown = (
        f" = {value!r}" if isinstance(value, int | float | str) and len(repr(value)) < 40 else ""
    )
    message = error["msg"].removeprefix("Value error, ")
    return f"{where}{shown}: {message}" if where else message  # a rule across settings
