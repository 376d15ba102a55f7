"""`lilo import <name> PATH`: a published dataset read where the user keeps it, by the
importer registered under that name (flows/importers/); each importer is one module there
or an installed package's entry point (group `lilo.importers`), and this command lists them."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from lilo.flows._publish import publish
from lilo.flows.cli._args import add_common_args
from lilo.flows.cli._prefect import running_flows, start_prefect_early
from lilo.flows.cli._settings import settings_from_args
from lilo.flows.cli._stop import stoppable
from lilo.flows.importers.base import available_importers, get_importer
from lilo.tasks.errors import InputError

__all__ = ["register"]


@stoppable
def cmd_import(args: argparse.Namespace) -> int:
    importer = get_importer(args.importer)
    path = Path(args.path)
    options = {o.name: getattr(args, o.name) for o in importer.options}
    importer.check(path, options)  # before any flow starts: a typo costs nothing
    settings = settings_from_args(args)
    start_prefect_early(settings, embeds=False)  # papers validated, nothing embedded
    with running_flows(args.debug):
        outcome = importer.run(path, settings, options)
    publish(settings)  # analysts see the import (and what it quarantined) at once
    return importer.report(outcome, path)


def _no_importer(args: argparse.Namespace) -> int:
    """`lilo import` without a name: the known importers, in the one line of an input error."""
    raise InputError(
        f"name an importer: known are {', '.join(available_importers())}; "
        "`lilo import <name> --help` says what each reads"
    )


def register(sub: Any) -> None:
    imp = sub.add_parser(
        "import",
        help="import a published dataset (a benchmark, probe data) from your clone",
        description="Reads a published dataset where you keep it; nothing is copied into "
        "lilo. Each importer is one module of flows/importers/ or an installed package's entry "
        "point (docs/contributing.md).",
    )
    imp.set_defaults(func=_no_importer)
    kinds = imp.add_subparsers(dest="importer", metavar="IMPORTER")
    for name in available_importers():
        importer = get_importer(name)
        cmd = kinds.add_parser(name, help=importer.title, description=importer.description)
        cmd.add_argument("path", metavar=importer.reads, help=importer.reads_help)
        for option in importer.options:
            cmd.add_argument(
                f"--{option.name}",
                default=option.default,
                metavar=option.metavar,
                help=option.help,
            )
        add_common_args(cmd)
        cmd.set_defaults(func=cmd_import)
