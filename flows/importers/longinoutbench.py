"""`lilo import longinoutbench CLONE`: a user's clone of the RAL-Writer paper's published
benchmark becomes a dataset version (docs/design.md §14; flows/import_benchmark.py)."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from lilo.flows.importers.base import (
    Importer,
    NothingImported,
    Option,
    importer,
    print_import_outcome,
)
from lilo.tasks.config import Settings
from lilo.tasks.printable import printable
from lilo.tasks.text import counted

__all__ = ["LONGINOUTBENCH"]


def _check(path: Path, options: Mapping[str, str]) -> object:
    from lilo.tasks.benchmark import locate_dataset

    return locate_dataset(path, options["name"])


def _run(path: Path, settings: Settings, options: Mapping[str, str]) -> Any:
    from lilo.flows.import_benchmark import import_benchmark_flow

    result = import_benchmark_flow(str(path), options["name"], settings)
    if result.error:
        raise NothingImported(result.error)
    return result


def _report(result: Any, path: Path) -> int:
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
        return 0
    print("nothing imported: no group has three readable papers (see the problems above)")
    return 1


LONGINOUTBENCH = importer(
    Importer(
        "longinoutbench",
        title="LongInOutBench (RAL-Writer): your clone of github.com/OnlyAR/RAL-Writer",
        description="CLONE is the clone (or its dataset/ folder). Papers are imported as "
        "published, what the cleaned-papers suite finds in them kept as warnings; questions "
        "imported as approved QA pairs, the prompts, method templates and checklists stored "
        "with the version. Each problem is one line naming its file; the "
        "rest imports. Exit 0 when something was imported, 1 when nothing could be, 2 when "
        "CLONE is missing. A second import adds nothing.",
        reads="CLONE",
        reads_help="your clone of the benchmark, or its dataset/ folder",
        check=_check,
        run=_run,
        report=_report,
        options=(
            Option(
                "name",
                default="longinoutbench",
                metavar="NAME",
                help="the dataset version it becomes, what --dataset takes "
                "(default: longinoutbench)",
            ),
        ),
    ),
    __name__,
)
