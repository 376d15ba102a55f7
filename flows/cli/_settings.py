"""Settings from the command line, layered over the file and the environment."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from lilo.flows.cli._errors import CLIError
from lilo.tasks.config import Settings
from lilo.tasks.config_loading import load_settings

__all__ = ["check_names", "settings_from_args"]


def settings_from_args(args: argparse.Namespace, **extra: Any) -> Settings:
    """Defaults < TOML file < LILO_* environment < command-line options."""
    found: dict[str, Any] = {}
    for option, key in (
        ("data_dir", "data_dir"),
        ("dataset", "dataset_version"),
        ("samples", "generate.samples"),
        ("review", "qa.review"),
        ("target_words", "generate.target_words"),
        ("methods", "generate.methods"),
        ("publish_partial", "publish_partial"),
        ("profile", "profile"),
        ("judge_repeats", "stats.judge_repeats"),
    ):
        if getattr(args, option, None):
            found[key] = getattr(args, option)
    found.update(getattr(args, "set", None) or [])
    if getattr(args, "sweep", None):
        found["generate.sweep"] = dict(args.sweep)
    config = getattr(args, "config", None)
    return load_settings(Path(config) if config else None, {**found, **extra})


def check_names(settings: Settings) -> None:
    """The methods the settings name exist: a typo fails here, not at the generate stage."""
    from lilo.flows._preflight import PreflightError
    from lilo.flows._preflight import check_names as check

    try:
        check(settings)
    except PreflightError as exc:
        raise CLIError(str(exc)) from exc
