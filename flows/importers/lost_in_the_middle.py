"""`lilo import lost-in-the-middle CLONE`: the probe data and prompt templates of a user's
clone of the Lost-in-the-Middle authors' repository (docs/design.md §17;
flows/import_probes.py)."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from lilo.flows.importers.base import Importer, importer, print_import_outcome
from lilo.tasks.config import Settings
from lilo.tasks.printable import printable

__all__ = ["LOST_IN_THE_MIDDLE"]


def _check(path: Path, options: Mapping[str, str]) -> object:
    from lilo.tasks.probes import locate_clone

    return locate_clone(path)


def _run(path: Path, settings: Settings, options: Mapping[str, str]) -> Any:
    from lilo.flows.import_probes import import_probes_flow

    return import_probes_flow(str(path), settings)


def _report(result: Any, path: Path) -> int:
    print(f"Lost in the Middle at {path} (run {result.run_id})")
    for file, n in sorted(result.files.items()):
        print(f"  {printable(file, one_line=True)}: {n} items")
    print(f"  items: {result.items} read")
    print(f"  prompts: {len(result.prompts)} templates ({', '.join(result.prompts) or '-'})")
    if result.absent:
        print(f"  absent in this clone (fine): {', '.join(result.absent)}")
    print_import_outcome(result)
    if result.items:
        print("next: lilo probe kv --keys 75 --examples 20; lilo probe mdqa --docs 10,20")
        return 0
    print("nothing imported: no file held a valid item (see the problems above)")
    return 1


LOST_IN_THE_MIDDLE = importer(
    Importer(
        "lost-in-the-middle",
        title="Lost in the Middle's probe data: your clone of github.com/nelson-liu/"
        "lost-in-the-middle",
        description="CLONE is the repository's root. Whatever of kv_retrieval_data/ and "
        "qa_data/ it holds is checked line by line and stored as probe items, its prompt "
        "templates with them; nothing is copied into lilo. Each problem is one line naming "
        "its file and line. Exit 0 when something was imported, 1 when nothing could be, "
        "2 when CLONE is not a clone. A second import adds nothing.",
        reads="CLONE",
        reads_help="your clone of nelson-liu/lost-in-the-middle",
        check=_check,
        run=_run,
        report=_report,
    ),
    __name__,
)
