"""`lilo refs PATH`: a survey's bibliography, one JSON object per entry, ids resolved."""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from pathlib import Path
from typing import Any

from lilo.flows.cli._args import add_common_args
from lilo.flows.cli._settings import settings_from_args
from lilo.tasks.config_loading import Select

__all__ = ["register"]

_FIELDS = (
    "key",
    "title",
    "arxiv_id",
    "how",
    "authors",
    "year",
    "venue",
    "doi",
    "url",
    "section",
    "citation_group",
    "citations",
)


def cmd_refs(args: argparse.Namespace) -> int:
    """0 with the entries printed; 1 when the survey or its bibliography cannot be read (the
    message names the files looked for); 2 when PATH does not exist."""
    from lilo.tasks.clean.errors import Quarantined
    from lilo.tasks.printable import printable
    from lilo.tasks.samples.survey import survey_references

    path = Path(args.path)
    if not path.exists():
        print(f"{path}: no such folder or archive", file=sys.stderr)
        return 2
    offline: list[tuple[Select, Any]] = (
        [(lambda s: s.samples.title_search, False)] if args.offline else []
    )
    settings = settings_from_args(args, *offline)
    try:
        survey = survey_references(path, settings)
    except Quarantined as exc:
        if exc.reason == "no_bibliography":
            why = f"{path}: no bibliography read: {exc.detail}"
        else:
            why = f"{path}: cannot read it as a survey ({exc})"
        print(printable(why, one_line=True), file=sys.stderr)
        return 1
    references = survey.references
    for ref in references:  # titles, authors and venues as the survey's bibliography has them
        print(printable(json.dumps({f: getattr(ref, f) for f in _FIELDS}, ensure_ascii=False)))
    resolved = sum(1 for r in references if r.arxiv_id)
    hows = ", ".join(f"{how} {n}" for how, n in Counter(r.how for r in references).most_common())
    print(
        printable(
            f"{resolved}/{len(references)} entries resolved ({hows}) "
            f"from {', '.join(survey.bibliography)}",
            one_line=True,
        ),
        file=sys.stderr,
    )
    return 0


def register(sub: Any) -> None:
    refs = sub.add_parser(
        "refs",
        help="a survey's references with their arXiv ids (JSON lines)",
        description="Reads the bibliography the survey's main file uses (following its "
        "inputs; the .bib files, else the compiled .bbl) and prints one JSON object per "
        "entry: key, title, arxiv_id (or null), how it was found or why not, authors, year, "
        "venue, doi, url, the section of its first citation and its co-citation group. "
        "Entries without an id are looked up by title on arxiv.api_url unless --offline. "
        "Exits 1 when no bibliography can be read, naming the files looked for.",
    )
    refs.add_argument("path", help="a survey's source folder or e-print archive")
    refs.add_argument("--offline", action="store_true", help="no title search: no network")
    add_common_args(refs)
    refs.set_defaults(func=cmd_refs)
