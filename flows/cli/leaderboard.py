"""`lilo leaderboard`: a result version's leaderboard (tasks/leaderboard.py) as a terminal
table, CSV, JSON or Markdown, from the published copy."""

from __future__ import annotations

import argparse
import csv
import json
import sys
from dataclasses import asdict
from pathlib import Path
from typing import Any, Literal

from lilo.flows.cli._args import add_common_args, add_renamed_arg
from lilo.flows.cli._errors import CLIError
from lilo.flows.cli._settings import settings_from_args
from lilo.flows.cli._warehouse import require_warehouse
from lilo.tasks.leaderboard import Board
from lilo.warehouse.queries.results import NoResults, read_board
from lilo.warehouse.queries.reviews import waiting_note
from lilo.warehouse.read_only import read_only

__all__ = ["print_board", "register"]

FORMATS = ("table", "csv", "json", "markdown")


def cmd_leaderboard(args: argparse.Namespace) -> int:
    settings = settings_from_args(args)
    require_warehouse(settings)
    published = settings.published_path
    if not published.exists():
        raise CLIError(
            f"no published results in {settings.data_dir}: runs publish once summaries are "
            "scored; `lilo run` or `lilo demo` makes some",
            code=1,
        )
    with read_only(published) as con:
        try:
            board = Board.of(read_board(con, args.dataset, args.result_version))
        except NoResults as exc:
            waiting = waiting_note(con)
            raise CLIError(f"{exc}" + (f"; {waiting}" if waiting else ""), code=1) from exc
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
    else:  # true/false as JSON and SQL write them, not Python's True/False
        records = [
            {k: str(v).lower() if isinstance(v, bool) else v for k, v in r.items()}
            for r in board.records()
        ]
        writer = csv.DictWriter(sys.stdout, fieldnames=list(board.rows.columns))
        writer.writeheader()
        writer.writerows(records)


def print_board(board: Board, console: Any = None) -> None:
    """Table 2 as wide as the terminal allows: the first of these that fits: the wide layout
    with each interval beside its score, then below it, then each length on its own row
    (intervals beside, then below), then each method under its own name, a score per row;
    numbers are never cut (in the narrowest terminal they wrap), method names wrap. Under
    it, the paired comparison with the reference method, laid out the same way."""
    from rich.console import Console

    console = console or Console()
    layouts = [
        (board.wide, False, False),
        (board.wide, True, False),
        (board.stacked, False, True),
        (board.stacked, True, True),
    ]
    for layout, below, stacked in layouts:
        header, body = layout(below)
        if _fits(console, header, body, wrap=stacked):
            console.print(_table(board.title(), board.caption(), header, body, wrap=stacked))
            break
    else:
        _print_by_method(console, board)
    console.print(board.scope_line(), markup=False)
    title, header, body = board.comparison()
    if body:
        if _fits(console, header, body, wrap=True, names=3):
            console.print(_table(title, "", header, body, wrap=True, names=3))
        else:
            _print_comparison_by_method(console, title, header, body)
    if board.partial:
        console.print(
            "This result version is PARTIAL: some expected summaries failed or are unscored; "
            "`lilo failures` lists them with their reasons.",
            markup=False,
        )


def _print_by_method(console: Any, board: Board) -> None:
    """The narrowest Table 2: the title and caption as text, then each method's name on its
    own line over its rows (length, score, value, 95% interval, n), no borders."""
    from rich.markup import escape

    console.print(escape(board.title()), style="italic")
    header, body = board.stacked(below=True)
    names = header.index("length")
    group: list[list[str]] = []
    for row in [*body, None]:
        if row is None or (group and any(row[:names])):
            _method_block(console, header, group, names)
            group = []
        if row is not None:
            group.append(row)
    console.print(escape(board.caption()), style="dim")


def _method_block(console: Any, header: list[str], rows: list[list[str]], names: int) -> None:
    """One method of `_print_by_method`: its name (and backbone), then a row per score."""
    from rich.markup import escape

    console.print(escape(" · ".join(n for n in rows[0][:names] if n)), style="bold")
    body = []
    for row in rows:
        length, *cells, n = row[names:]
        for i, (score, cell) in enumerate(zip(header[names + 1 : -1], cells, strict=True)):
            value, _, interval = cell.partition("\n")
            body.append([length if i == 0 else "", score, value, interval, n if i == 0 else ""])
    console.print(_bare(["length", "score", "value", "95% interval", "n"], body))


def _print_comparison_by_method(
    console: Any, title: str, header: list[str], body: list[list[str]]
) -> None:
    """The paired comparison for the narrowest terminal: each method's name over its rows,
    the interval below the difference."""
    from rich.markup import escape

    console.print(escape(title), style="italic")
    blocks: list[list[list[str]]] = []
    for row in body:
        if row[0] or not blocks:
            blocks.append([])
        blocks[-1].append(row)
    for rows in blocks:
        console.print(escape(rows[0][0]), style="bold")
        lines = [[r[1], r[2], f"{r[3]}\n{r[4]}", r[5], r[6]] for r in rows]
        console.print(_bare([header[1], header[2], "diff", header[5], "noise"], lines))


def _bare(header: list[str], body: list[list[str]]) -> Any:
    """A table without borders whose numbers wrap rather than being cut."""
    from rich import box
    from rich.markup import escape
    from rich.table import Table

    table = Table(box=box.SIMPLE_HEAD, pad_edge=False, show_edge=False)
    for i, column in enumerate(header):
        table.add_column(column, justify="left" if i < 2 else "right", overflow="fold")
    for row in body:
        table.add_row(*(escape(cell) for cell in row))
    return table


# A name column folds down to this many characters before a layout counts as too narrow.
_NAME_MIN = 10


def _fits(
    console: Any, header: list[str], body: list[list[str]], wrap: bool, names: int = 0
) -> bool:
    """Whether the table's numbers fit the console, its name columns folded (with `wrap`)
    to _NAME_MIN characters at most and their headers wrapped."""
    words = [i for i, c in enumerate(header) if c in _WORDS]
    shown = header
    if wrap:  # names fold; a header of words wraps to its longest word ("within noise")
        body = [[c[:_NAME_MIN] if i in words else c for i, c in enumerate(r)] for r in body]
        shown = [max(c.split(), key=len) if i in words else c for i, c in enumerate(header)]
    table = _table("", "", shown, body, wrap=wrap, names=names)
    # Measured unconstrained: at the console's width rich would report what fits.
    needed = console.measure(table, options=console.options.update_width(10**6)).maximum
    return needed <= console.width


_WORDS = ("method", "backbone", "within noise")


def _table(
    title: str, caption: str, header: list[str], body: list[list[str]], wrap: bool, names: int = 0
) -> Any:
    """A rich table: method and backbone columns fold when `wrap`, the first `names` columns
    are left-aligned, numbers are never cut."""
    from rich.markup import escape
    from rich.table import Table

    from lilo.tasks.printable import printable

    table = Table(title=escape(title), caption=escape(caption) if caption else None)
    for i, column in enumerate(header):
        if column in _WORDS:  # words: they may wrap
            table.add_column(column, overflow="fold" if wrap else "ellipsis", no_wrap=not wrap)
        else:
            justify: Literal["left", "right"] = "left" if i < names else "right"
            table.add_column(column, justify=justify, no_wrap=True, min_width=len(column))
    for i, row in enumerate(body):
        # stacked: a rule under each method's last row (a method is named on its first row)
        last = i + 1 == len(body) or body[i + 1][0] != ""
        cells = (printable(cell, markup=True) for cell in row)  # names from settings, imports
        table.add_row(*cells, end_section=wrap and last)
    return table


def print_published(published: Path) -> bool:
    """The default leaderboard of a published copy as a table; False, printing nothing,
    when nothing is published."""
    if not published.exists():
        return False
    with read_only(published) as con:
        try:
            board = Board.of(read_board(con))
        except NoResults:
            return False
    print_board(board)
    return True


def register(sub: Any) -> None:
    board = sub.add_parser(
        "leaderboard",
        help="print a result version's leaderboard (default: the published one) as Table 2",
        description="The leaderboard as the paper's Table 2: per method, S_l, S_c, S_q and n "
        "scored/expected for each length, then Overall (each score averaged over the lengths). "
        "table fits the terminal (lengths stacked when it is narrow); csv and json give the "
        "`leaderboard` view's rows; markdown gives Table 2 as a pipe table. Under the table, "
        "each method's paired difference from the reference method (`stats.reference`), "
        "per length and score, with its interval and p-value "
        "('n too small' below 6 samples at 95%); "
        'json holds it under "paired", analysts query the `res_paired` table.',
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
