"""`lilo import longinoutbench PATH`: a user's clone of the published benchmark becomes a
dataset version (docs/design.md §14). Exit 0 when something was imported (problems are listed),
1 when nothing could be, 2 when PATH or its papers folder is missing."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from lilo.flows.cli._args import add_common_args
from lilo.flows.cli._errors import CLIError
from lilo.flows.cli._imports import print_import_outcome
from lilo.flows.cli._prefect import running_flows, start_prefect_early
from lilo.flows.cli._settings import settings_from_args
from lilo.flows.cli._stop import stoppable
from lilo.tasks.text import counted

__all__ = ["register"]


@stoppable
def cmd_import_longinoutbench(args: argparse.Namespace) -> int:
    from lilo.flows.import_benchmark import import_benchmark_flow
    from lilo.tasks.benchmark import locate_dataset

    path = Path(args.path)
    locate_dataset(path, args.name)  # before any flow starts: a typo costs nothing
    settings = settings_from_args(args)
    start_prefect_early(settings)
    with running_flows(args.debug):
        result = import_benchmark_flow(str(path), args.name, settings)
    if result.error:
        raise CLIError(result.error, code=1)
    _print_result(result, path)
    return 0 if result.samples else 1


def _print_result(result: Any, path: Path) -> None:
    from lilo.tasks.printable import printable

    name = result.name
    print(f"LongInOutBench at {path} -> dataset {name} (run {result.run_id})")
    print(
        f"  groups:   {counted(result.group_folders, 'folder')}, "
        f"{counted(result.samples, 'sample')}"
    )
    print(f"  papers:   {result.papers} read, {result.papers_kept} distinct papers kept")
    print(
        f"  QA pairs: {result.qa_single} single, {result.qa_cross} cross "
        f"(approved, reviewer import:{name})"
    )
    print(f"  assets:   {len(result.assets)} ({', '.join(result.assets) or '-'})")
    if result.warnings:
        print(
            "  warnings: what lilo's cleaned-papers checks find, kept as published "
            "(view benchmark_warnings):"
        )
        for kind, n in result.warnings.items():
            print(f"    {printable(kind, one_line=True)}: {n} paper{'' if n == 1 else 's'}")
    if result.stand_ins:
        print(f"  lilo's own stands in for: {', '.join(result.stand_ins)}")
    print_import_outcome(result)
    if result.samples:
        print(f"next: lilo run --dataset {name} --samples 3")
    else:
        print("nothing imported: no group has three readable papers (see the problems above)")


def register(sub: Any) -> None:
    imp = sub.add_parser(
        "import",
        help="import a published benchmark as a dataset version",
        description="Reads a benchmark where you keep it; nothing is copied into lilo.",
    )
    kinds = imp.add_subparsers(dest="benchmark", required=True, metavar="BENCHMARK")
    bench = kinds.add_parser(
        "longinoutbench",
        help="LongInOutBench (RAL-Writer): your clone of github.com/OnlyAR/RAL-Writer",
        description="CLONE is the clone (or its dataset/ folder). Papers are imported as "
        "published, what the cleaned-papers suite finds in them kept as warnings; questions "
        "imported as approved QA pairs, the prompts, method templates and checklists stored "
        "with the version. Each problem is one line naming its file; the "
        "rest imports. Exit 0 when something was imported, 1 when nothing could be, 2 when "
        "CLONE is missing. A second import adds nothing.",
    )
    bench.add_argument(
        "path", metavar="CLONE", help="your clone of the benchmark, or its dataset/ folder"
    )
    bench.add_argument(
        "--name",
        default="longinoutbench",
        metavar="NAME",
        help="the dataset version it becomes, what --dataset takes (default: longinoutbench)",
    )
    add_common_args(bench)
    bench.set_defaults(func=cmd_import_longinoutbench)
    from lilo.flows.cli.probe import add_import_parser

    add_import_parser(kinds)
