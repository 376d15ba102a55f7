"""The settings of a `lilo review` command (flows/cli/review.py, flows/cli/_grades.py)."""

from __future__ import annotations

import argparse
from typing import Any

from lilo.flows.cli._errors import CLIError
from lilo.flows.cli._settings import settings_from_args
from lilo.flows.cli._warehouse import require_warehouse

__all__ = ["review_settings"]


def review_settings(args: argparse.Namespace) -> Any:
    """The settings, for a warehouse that must exist (review never creates one). --reviewer
    or --sample given before an action that does not take it is a usage mistake, not
    ignored."""
    for option in ("reviewer", "sample"):
        if option in vars(args) and option not in args.takes:
            raise CLIError(
                f"--{option} does not apply to `lilo review {args.action}` "
                f"(see `lilo review {args.action} --help`)"
            )
    settings = settings_from_args(args)
    require_warehouse(settings)
    return settings
