"""`lilo stats` and `lilo discover`: what a dataset version holds, and building one from
surveys found by id or by an arXiv query."""

from __future__ import annotations

import argparse
from typing import Any

from lilo.flows.cli._common import (
    CLIError,
    add_common_args,
    add_pipeline_args,
    add_renamed_arg,
    require_warehouse,
    running_flows,
    settings_from_args,
    start_prefect_early,
)
from lilo.flows.cli._stop import stoppable

__all__ = ["register"]


def cmd_stats(args: argparse.Namespace) -> int:
    settings = settings_from_args(args)
    require_warehouse(settings)
    import duckdb

    from lilo.flows.samples import load_dataset_stats

    version = args.dataset_version or settings.dataset_version
    # The warehouse if no run holds it, else the published copy (docs/design.md §10).
    for path in (settings.db_path, settings.published_path):
        if not path.exists():
            continue
        try:
            con = duckdb.connect(str(path), read_only=True)
        except duckdb.IOException:
            continue
        try:
            stats = load_dataset_stats(con, version)
        except duckdb.CatalogException:
            break  # a warehouse from before dataset versions: nothing to report
        finally:
            con.close()
        if stats.samples or stats.number is not None:
            _print_stats(stats)
            return 0
        break
    raise CLIError(
        f"no dataset {version} in {settings.data_dir}: run `lilo demo` or `lilo discover`",
        code=1,
    )


def _print_stats(stats: Any) -> None:
    from rich.console import Console
    from rich.table import Table

    console = Console()
    number = f" (#{stats.number})" if stats.number is not None else ""
    console.print(
        f"Dataset {stats.dataset_version}{number}: {stats.samples} samples, "
        f"{stats.papers} papers, {len(stats.surveys)} surveys"
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
            s.title[:50],
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
        how.add_row(name, str(n))
    console.print(how)


@stoppable
def cmd_discover(args: argparse.Namespace) -> int:
    from lilo.flows.discover import discover_flow

    if not (args.survey or args.query):
        raise CLIError("give --survey ARXIV_ID (repeatable) or --query 'arXiv query'")
    extra: dict[str, Any] = {"samples.target_samples": args.target} if args.target else {}
    if args.survey:
        extra["surveys"] = args.survey  # checked and put in their normal form
    settings = settings_from_args(args, **extra)
    surveys = list(settings.surveys) if args.survey else None
    start_prefect_early(settings)
    with running_flows(args.debug):
        found = discover_flow(settings, surveys, args.query)
    print(
        f"dataset {found.dataset_version}: {found.samples} samples (target {found.target}) "
        f"from {len(found.kept)} surveys: {' '.join(found.kept) or '-'}"
    )
    for survey_id, why in found.skipped.items():
        print(f"  skipped {survey_id}: {why}")
    if found.kept:
        print("continue with: lilo run " + " ".join(f"--survey {s}" for s in found.kept))
    return 0 if found.samples else 1


def register(sub: Any) -> None:
    stats = sub.add_parser("stats", help="a dataset version's statistics")
    stats.add_argument(
        "--dataset-version",
        metavar="NAME",
        help="dataset version, e.g. v1 or longinoutbench (default: the configured one)",
    )
    add_renamed_arg(stats, "--version", "--dataset-version", "a dataset version")
    add_common_args(stats)
    stats.set_defaults(func=cmd_stats)

    discover = sub.add_parser(
        "discover",
        help="build a dataset version from surveys (ids or an arXiv query)",
        description="Reads surveys one by one (fetch, references, clean their papers) until "
        "the dataset would hold the target number of samples, then writes that version.",
    )
    discover.add_argument("--survey", action="append", help="a survey's arXiv id (repeatable)")
    discover.add_argument("--query", help="an arXiv query, e.g. 'ti:survey AND cat:cs.CL'")
    discover.add_argument("--target", type=int, help="samples wanted (samples.target_samples)")
    add_common_args(discover)
    add_pipeline_args(discover)
    discover.set_defaults(func=cmd_discover)
