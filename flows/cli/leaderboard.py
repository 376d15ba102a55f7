"""`lilo leaderboard`: a result version's leaderboard (tasks/leaderboard.py) as a terminal
table, CSV, JSON or Markdown, from the published copy."""

from __future__ import annotations

import argparse
import csv
import json
import sys
from dataclasses import asdict
from pathlib import Path
from typing import Any

from lilo.flows.cli._args import add_common_args, add_renamed_arg
from lilo.flows.cli._errors import CLIError
from lilo.flows.cli._settings import settings_from_args
from lilo.flows.cli._warehouse import require_warehouse
from lilo.tasks.leaderboard import Board
from lilo.warehouse.queries.results import read_board

__all__ = ["print_board", "register"]

FORMATS = ("table", "csv", "json", "markdown")


def cmd_leaderboard(args: argparse.Namespace) -> int:
    import duckdb

    settings = settings_from_args(args)
    require_warehouse(settings)
    published = settings.published_path
    if not published.exists():
        raise CLIError(
            f"no published results in {settings.data_dir}: runs publish once summaries are "
            "scored; `lilo run` or `lilo demo` makes some",
            code=1,
        )
    con = duckdb.connect(str(published), read_only=True)
    try:
        board = read_board(con, args.dataset, args.result_version)
    except LookupError as exc:
        raise CLIError(str(exc), code=1) from exc
    finally:
        con.close()
    write_board(board, args.format)
    return 0


def write_board(board: Board, fmt: str) -> None:
    """`board` on stdout in `fmt` (one of FORMATS)."""
    if fmt == "table":
        print_board(board)
    elif fmt == "markdown":
        sys.stdout.write(board.markdown())
    elif fmt == "json":
        meta = {
            "result_version": board.version,
            "dataset_version": board.dataset_version,
            "partial": board.partial,
            "published": board.published,
            "scope": asdict(board.scope) if board.scope else None,
        }
        json.dump(
            {**meta, "rows": board.records(), "paired": board.paired_records()},
            sys.stdout,
            indent=2,
        )
        sys.stdout.write("\n")
    else:
        records = board.records()
        writer = csv.DictWriter(sys.stdout, fieldnames=list(board.rows.columns))
        writer.writeheader()
        writer.writerows(records)


def print_board(board: Board, console: Any = None) -> None:
    """Table 2 as wide as the terminal allows: the first of these that fits: the wide layout
    with each interval beside its score, then below it, then each length on its own row
    (intervals beside, then below); numbers are never cut, only method names wrap. Under it,
    the paired comparison with the reference method."""
    from rich.console import Console

    console = console or Console()
    layouts = [
        (board.wide, False, False),
        (board.wide, True, False),
        (board.stacked, False, True),
        (board.stacked, True, True),
    ]
    for layout, below, stacked in layouts:
        table = _table(board.title(), board.caption(), *layout(below), wrap=stacked)
        if _fits(console, table):
            break
    console.print(table)
    console.print(board.scope_line(), markup=False)
    title, header, body = board.comparison()
    if body:
        console.print(_table(title, "", header, body, wrap=True, names=3))
    if board.partial:
        console.print(
            "This result version is PARTIAL: some expected summaries failed or are unscored; "
            "`lilo failures` lists them with their reasons.",
            markup=False,
        )


def _fits(console: Any, table: Any) -> bool:
    # Measured unconstrained: at the console's width rich would report what fits.
    needed = console.measure(table, options=console.options.update_width(10**6)).maximum
    return needed <= console.width


def _table(
    title: str, caption: str, header: list[str], body: list[list[str]], wrap: bool, names: int = 0
) -> Any:
    """A rich table: method and backbone columns fold when `wrap`, the first `names` columns
    are left-aligned, numbers are never cut."""
    from rich.markup import escape
    from rich.table import Table

    table = Table(title=escape(title), caption=escape(caption) if caption else None)
    for i, column in enumerate(header):
        if column in ("method", "backbone", "within noise"):  # words: they may wrap
            table.add_column(column, overflow="fold" if wrap else "ellipsis", no_wrap=not wrap)
        else:
            justify = "left" if i < names else "right"
            table.add_column(column, justify=justify, no_wrap=True, min_width=len(column))
    for i, row in enumerate(body):
        # stacked: a rule under each method's last row (a method is named on its first row)
        last = i + 1 == len(body) or body[i + 1][0] != ""
        table.add_row(*(escape(cell) for cell in row), end_section=wrap and last)
    return table


def print_published(published: Path) -> bool:
    """The default leaderboard of a published copy as a table; False, printing nothing,
    when nothing is published."""
    import duckdb

    if not published.exists():
        return False
    con = duckdb.connect(str(published), read_only=True)
    try:
        board = read_board(con)
    except LookupError:
        return False
    finally:
        con.close()
    print_board(board)
    return True


def register(sub: Any) -> None:
    board = sub.add_parser(
        "leaderboard",
        help="print a result version's leaderboard (default: the published one) as Table 2",
        description="The leaderboard as the paper's Table 2: per method, S_l, S_c, S_q and n "
        "scored/expected for each length, then Overall (each score averaged over the lengths). "
        "table fits the terminal (lengths stacked when it is narrow); csv and json give the "
        "`leaderboard` view's rows; markdown gives Table 2 as a pipe table.",
    )
    add_common_args(board)
    board.add_argument(
        "--dataset", metavar="NAME", help="the latest result version scored on this dataset version"
    )
    add_renamed_arg(board, "--version", "--result-version", "a result version")
    board.add_argument(
        "--result-version",
        dest="result_version",
        type=int,
        metavar="N",
        help="result version N (an integer: `res_versions`), not a dataset version",
    )
    board.add_argument("--format", choices=FORMATS, default="table", help="output format")
    board.set_defaults(func=cmd_leaderboard)
