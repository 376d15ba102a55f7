"""The options commands share and the types that read their values; usage
mistakes as one line."""

from __future__ import annotations

import argparse
import sys
from typing import Any, NoReturn

__all__ = [
    "Parser",
    "add_common_args",
    "add_old_name",
    "add_pipeline_args",
    "add_publish_args",
    "add_renamed_arg",
    "lengths",
]


class Parser(argparse.ArgumentParser):
    """Usage mistakes as one line on stderr that names the help to read (the command's own:
    an option a command does not know is its mistake, not `lilo`'s); exit 2. Options are
    taken whole only (`--sample 3` is not `--samples 3`), in sub-commands too (they are made
    with this class)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs["allow_abbrev"] = False
        super().__init__(*args, **kwargs)

    def parse_known_args(self, args: Any = None, namespace: Any = None) -> Any:
        parsed, extras = super().parse_known_args(args, namespace)
        if extras and " " in self.prog:  # a command's parser ("lilo review list")
            self.error(f"unrecognized arguments: {' '.join(extras)}")
        return parsed, extras

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"lilo: {message} (see `{self.prog} --help`)\n")


def add_renamed_arg(p: argparse.ArgumentParser, old: str, new: str, what: str) -> None:
    """An option's old name that meant something else too, hidden from --help, as a usage
    error that names the new one (`--version`: a dataset or a result version?)."""

    class Renamed(argparse.Action):
        def __call__(self, parser: Any, *_: Any) -> None:
            parser.error(f"{old} is now {new} ({what})")

    p.add_argument(
        old, action=Renamed, nargs="?", default=argparse.SUPPRESS, help=argparse.SUPPRESS
    )


def add_old_name(
    p: argparse.ArgumentParser, old: str, new: str, dest: str | None = None, **kwargs: Any
) -> None:
    """An option's old name, hidden from --help: still taken, as `new`, with a line on
    stderr saying what it became. `dest` and `kwargs` as `new` was added with (type,
    action)."""

    class OldName(argparse.Action):
        def __call__(self, parser: Any, namespace: Any, values: Any, *_: Any) -> None:
            print(f"lilo: {old} is now {new}; taken as {new}", file=sys.stderr)
            setattr(namespace, self.dest, True if self.nargs == 0 else values)

    flag = kwargs.pop("action", None) == "store_true"
    dest = dest or new.lstrip("-").replace("-", "_")
    p.add_argument(
        old,
        action=OldName,
        dest=dest,
        nargs=0 if flag else None,
        default=argparse.SUPPRESS,
        help=argparse.SUPPRESS,
        **kwargs,
    )


def add_common_args(p: argparse.ArgumentParser) -> None:
    """Where the data lives and how settings are given: every command takes these. Defaults
    are suppressed so that an option given before a sub-command is not reset after it."""
    p.add_argument(
        "--data-dir",
        default=argparse.SUPPRESS,
        help="where the warehouse, archives and caches live (default: lilo-data)",
    )
    p.add_argument("--config", default=argparse.SUPPRESS, help="TOML settings file")
    p.add_argument(
        "--set",
        action="append",
        type=_key_value,
        default=argparse.SUPPRESS,
        metavar="KEY=VALUE",
        help="any setting, e.g. llm.model=gpt-4o; a list comma-separated, e.g. "
        "probe.kv_keys=75,140 (repeatable)",
    )
    p.add_argument(
        "--debug",
        action="store_true",
        default=argparse.SUPPRESS,
        help="show the traceback of an error",
    )


def add_pipeline_args(p: argparse.ArgumentParser) -> None:
    """What a run computes: for the commands that run the pipeline."""
    p.add_argument("--review", choices=("auto", "manual"), help="QA review mode")
    p.add_argument(
        "--target-words",
        type=lengths,
        help="comma-separated target lengths, e.g. 4000,8000,16000",
    )
    from lilo.tasks.methods import available_methods  # the registered ones (tasks/methods/)

    p.add_argument(
        "--methods",
        "--method",  # as `lilo show` spells it
        dest="methods",
        type=_names,
        help="comma-separated methods, e.g. single,ral_writer; known: "
        + ", ".join(available_methods()),
    )
    p.add_argument(
        "--profile",
        choices=("paper",),
        help="a named set of settings: `paper` is the setting behind the paper's Table 2 "
        "(temperatures, GPT-4o-mini judge, methods, lengths; docs/reference.md); explicit "
        "settings (--set, LILO_*, --config) still win (setting profile)",
    )
    p.add_argument(
        "--judge-repeats",
        type=int,
        metavar="N",
        help="ask the judge N more times per summary and report its own spread per cell "
        "(setting stats.judge_repeats; the judge_spread view)",
    )
    p.add_argument(
        "--sweep",
        action="append",
        type=_sweep,
        metavar="SETTING=V1,V2,...",
        help="run the methods it changes at each value, as named variants on one leaderboard, "
        "e.g. generate.ral.k=4,8,12,16; two --sweep make a grid (setting generate.sweep)",
    )


def add_publish_args(p: argparse.ArgumentParser) -> None:
    """How results are published: for the commands that run the materialize stage."""
    p.add_argument(
        "--publish-partial",
        action="store_true",
        help="publish this run's result version as the default leaderboard even when it is "
        "partial (some summaries failed or are unscored); without it the leaderboard keeps "
        "the last complete version (setting publish_partial)",
    )


def lengths(value: str) -> list[int]:
    """Comma-separated target lengths in words, as an option's type: whole numbers, or
    thousands as lilo prints them (4k)."""
    try:
        return [int(v[:-1]) * 1000 if v.lower().endswith("k") else int(v) for v in _names(value)]
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"{value!r} is not comma-separated lengths in words, e.g. 4000,8000,16000 or 4k,8k,16k"
        ) from None


def _names(value: str) -> list[str]:
    names = [v.strip() for v in value.split(",") if v.strip()]
    if not names:
        raise argparse.ArgumentTypeError(f"{value!r} names nothing")
    return names


def _sweep(item: str) -> tuple[str, list[Any]]:
    from lilo.tasks.sweep import SweepError, parse_sweep

    try:
        return parse_sweep(item)
    except SweepError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def _key_value(item: str) -> tuple[str, str]:
    key, sep, value = item.partition("=")
    if not sep or not key.strip():
        raise argparse.ArgumentTypeError(f"{item!r} is not KEY=VALUE, e.g. llm.model=gpt-4o")
    return key.strip(), value.strip()
