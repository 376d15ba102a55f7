"""`lilo report`: a result version as one static HTML page (leaderboard, position curves,
lengths, S_c, cost, dataset statistics, failures), written next to its published Parquet."""

from __future__ import annotations

import argparse
from typing import Any

from lilo.flows.cli._args import add_common_args, add_renamed_arg
from lilo.flows.cli._errors import CLIError
from lilo.flows.cli._settings import settings_from_args
from lilo.flows.cli._warehouse import published_results

__all__ = ["register"]


def cmd_report(args: argparse.Namespace) -> int:
    from lilo.flows._results_report import write_report
    from lilo.tasks.results_report import cache_figures
    from lilo.warehouse.queries.results import NoResults

    settings = settings_from_args(args)
    cache_figures(settings)
    with published_results(settings) as con:
        try:
            path = write_report(con, settings, args.result_version)
        except NoResults as exc:
            raise CLIError(str(exc), code=1) from exc
    print(path.resolve())
    return 0


def register(sub: Any) -> None:
    report = sub.add_parser(
        "report",
        help="a result version as one static HTML page; prints its path",
        description="Writes published/results/version=NNNN/report.html (plots embedded, "
        "nothing fetched) from the published copy and prints where it is.",
    )
    report.add_argument(
        "--result-version",
        type=int,
        metavar="N",
        help="result version, as `lilo leaderboard` names it (default: the latest)",
    )
    add_renamed_arg(report, "--version", "--result-version", "a result version")
    add_common_args(report)
    report.set_defaults(func=cmd_report)
