"""`lilo datasets`, `lilo stats` and `lilo discover`: the dataset versions there are, what
one holds, and building one from surveys found by id or by an arXiv query."""

from __future__ import annotations

import argparse
from typing import Any

from lilo.flows.cli._args import add_common_args, add_old_name, add_renamed_arg
from lilo.flows.cli._errors import CLIError
from lilo.flows.cli._prefect import running_flows, start_prefect_early
from lilo.flows.cli._settings import settings_from_args
from lilo.flows.cli._stop import stoppable
from lilo.flows.cli._warehouse import require_warehouse
from lilo.tasks.config_loading import Select
from lilo.tasks.text import counted

__all__ = ["register"]


def cmd_datasets(args: argparse.Namespace) -> int:
    from rich.console import Console
    from rich.table import Table

    from lilo.tasks.printable import printable
    from lilo.warehouse.queries.datasets import dataset_overview
    from lilo.warehouse.read_only import MissingTable, read_first

    settings = settings_from_args(args)
    require_warehouse(settings)
    # the warehouse if no run holds it, else the published copy (docs/design.md §10)
    with read_first(settings.db_path, settings.published_path) as con:
        try:
            found = dataset_overview(con) if con is not None else []
        except MissingTable:
            found = []  # a warehouse from before dataset versions
    if not found:
        raise CLIError(
            f"no dataset versions in {settings.data_dir}: `lilo demo`, `lilo run --survey ID` "
            "or `lilo import longinoutbench CLONE` makes one",
            code=1,
        )
    table = Table(title=f"Dataset versions in {printable(settings.data_dir, markup=True)}")
    header = ("dataset", "#", "created", "samples", "papers", "surveys", "results")
    for column in header:
        left = column in ("dataset", "created")
        table.add_column(column, justify="left" if left else "right")
    for d in found:
        results = d["result_versions"]
        table.add_row(
            printable(d["dataset_version"], one_line=True, markup=True),
            str(d["number"]),
            f"{d['created_at']:%Y-%m-%d}",
            str(d["n_samples"]),
            str(d["n_papers"]),
            str(d["surveys"]) if d["surveys"] else "imported",
            f"{results} (latest {d['latest_result_version']})" if results else "none yet",
        )
    console = Console()
    console.print(table)
    console.print(
        "Give a dataset's name to `lilo run --dataset NAME`, `lilo stats --dataset NAME`, "
        "`lilo leaderboard --dataset NAME`.",
        markup=False,
        soft_wrap=True,
    )
    return 0


def cmd_stats(args: argparse.Namespace) -> int:
    from lilo.flows.samples import load_dataset_stats
    from lilo.warehouse.read_only import MissingTable, read_first

    settings = settings_from_args(args)
    require_warehouse(settings)
    version = settings.dataset_version
    with read_first(settings.db_path, settings.published_path) as con:
        try:
            stats = load_dataset_stats(con, version) if con is not None else None
        except MissingTable:
            stats = None  # a warehouse from before dataset versions: nothing to report
    if stats is not None and (stats.samples or stats.number is not None):
        _print_stats(stats)
        return 0
    raise CLIError(
        f"no dataset {version} in {settings.data_dir}: `lilo datasets` lists those there are; "
        "`lilo demo` or `lilo discover` makes one",
        code=1,
    )


def _print_stats(stats: Any) -> None:
    from rich.console import Console
    from rich.table import Table

    from lilo.tasks.printable import printable

    console = Console()
    number = f" (#{stats.number})" if stats.number is not None else ""
    console.print(
        f"Dataset {stats.dataset_version}{number}: {counted(stats.samples, 'sample')}, "
        f"{counted(stats.papers, 'paper')}, {counted(len(stats.surveys), 'survey')}",
        markup=False,
    )
    words = Table(title="Input words per sample")
    summary = stats.words_summary()
    for name in summary:
        words.add_column(name, justify="right")
    words.add_row(*(f"{v:,.0f}" for v in summary.values()))
    console.print(words)
    surveys = Table(title="Surveys")
    for column in ("survey", "title", "references", "resolved", "rate", "samples"):
        surveys.add_column(column, justify="left" if column in ("survey", "title") else "right")
    for s in stats.surveys:
        surveys.add_row(
            s.survey_id,
            printable(s.title[:50], one_line=True, markup=True),  # as arXiv gave it
            str(s.references),
            str(s.resolved),
            f"{s.resolved_rate:.0%}",
            str(s.samples),
        )
    console.print(surveys)
    how = Table(title="How references resolved")
    how.add_column("how")
    how.add_column("entries", justify="right")
    for name, n in sorted(stats.how.items(), key=lambda i: -i[1]):
        how.add_row(printable(name, one_line=True, markup=True), str(n))
    console.print(how)


@stoppable
def cmd_discover(args: argparse.Namespace) -> int:
    from lilo.flows.discover import discover_flow
    from lilo.tasks.printable import printable

    if not (args.survey or args.query):
        raise CLIError("give --survey ARXIV_ID (repeatable) or --query 'arXiv query'")
    given: list[tuple[Select, Any]] = []
    if args.target_samples:
        given.append((lambda s: s.samples.target_samples, args.target_samples))
    if args.survey:
        given.append((lambda s: s.surveys, args.survey))  # checked and put in their normal form
    settings = settings_from_args(args, *given)
    surveys = list(settings.surveys) if args.survey else None
    start_prefect_early(settings)
    with running_flows(args.debug):
        found = discover_flow(settings, surveys, args.query)
    print(
        f"dataset {found.dataset_version}: {counted(found.samples, 'sample')} (target "
        f"{found.target}) from {counted(len(found.kept), 'survey')}: {' '.join(found.kept) or '-'}"
    )
    for survey_id, why in found.skipped.items():  # why may quote arXiv or a paper
        print(f"  skipped {survey_id}: {printable(why, one_line=True)}")
    if found.kept:
        print("continue with: lilo run " + " ".join(f"--survey {s}" for s in found.kept))
    return 0 if found.samples else 1


def register(sub: Any) -> None:
    datasets = sub.add_parser(
        "datasets",
        help="the dataset versions in the warehouse, with their samples and results",
        description="One line per dataset version: its number, when it was written, its "
        "samples, papers and surveys (`imported` for a published benchmark), and its result "
        "versions. Its name is what --dataset takes.",
    )
    add_common_args(datasets)
    datasets.set_defaults(func=cmd_datasets)

    stats = sub.add_parser(
        "stats",
        help="a dataset version's statistics",
        description="A dataset version's samples, papers and surveys: input words per sample, "
        "each survey's references and how many resolved to arXiv ids, and how they were "
        "found (the same as the run's `dataset-<version>-stats` artifact, with its "
        "histogram).",
    )
    stats.add_argument(
        "--dataset",
        metavar="NAME",
        help="the dataset version, e.g. v1 or longinoutbench (default: the setting "
        "dataset_version; `lilo datasets` lists them)",
    )
    add_old_name(stats, "--dataset-version", "--dataset")
    add_renamed_arg(stats, "--version", "--dataset", "a dataset version")
    add_common_args(stats)
    stats.set_defaults(func=cmd_stats)

    discover = sub.add_parser(
        "discover",
        help="build a dataset version from surveys (ids or an arXiv query)",
        description="Reads surveys one by one (fetch, references, clean their papers) until "
        "the dataset would hold the target number of samples, then writes that version; "
        "`lilo run --survey ...` (it prints the command) summarizes and scores it.",
    )
    discover.add_argument(
        "--survey", action="append", metavar="ARXIV_ID", help="a survey's arXiv id (repeatable)"
    )
    discover.add_argument("--query", help="an arXiv query, e.g. 'ti:survey AND cat:cs.CL'")
    discover.add_argument(
        "--target-samples",
        type=int,
        metavar="N",
        help="stop once the dataset would hold N samples (setting samples.target_samples, "
        "default 100)",
    )
    add_old_name(discover, "--target", "--target-samples", type=int)
    add_common_args(discover)
    discover.set_defaults(func=cmd_discover)
