"""Settings from the command line, layered over the file and the environment."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any, get_origin

from lilo.flows.cli._errors import CLIError
from lilo.tasks.config import Settings, field_at
from lilo.tasks.config_loading import Select, load_settings, setting_path

__all__ = ["check_names", "settings_from_args"]


# The options every command may carry, each with the setting it sets.
_OPTIONS: tuple[tuple[str, Select], ...] = (
    ("data_dir", lambda s: s.data_dir),
    ("dataset", lambda s: s.dataset_version),
    ("samples", lambda s: s.generate.samples),
    ("review", lambda s: s.qa.review),
    ("target_words", lambda s: s.generate.target_words),
    ("methods", lambda s: s.generate.methods),
    ("publish_partial", lambda s: s.publish_partial),
    ("profile", lambda s: s.profile),
    ("judge_repeats", lambda s: s.stats.judge_repeats),
    ("max_tokens", lambda s: s.runner.max_tokens),
    ("max_cost", lambda s: s.runner.max_cost),
)


def settings_from_args(args: argparse.Namespace, *given: tuple[Select, Any]) -> Settings:
    """Defaults < TOML file < LILO_* environment < command-line options: the common ones,
    `--set KEY=VALUE`, `--sweep`, then what the command `given` (setting, value)."""
    found: dict[str, Any] = {}
    for option, select in _OPTIONS:
        if getattr(args, option, None):
            found[setting_path(select)] = getattr(args, option)
    found.update((key, _value(key, value)) for key, value in getattr(args, "set", None) or [])
    if getattr(args, "sweep", None):
        found[setting_path(lambda s: s.generate.sweep)] = dict(args.sweep)
    found.update((setting_path(select), value) for select, value in given)
    config = getattr(args, "config", None)
    return load_settings(Path(config) if config else None, found)


def _value(key: str, value: str) -> str | list[str]:
    """A `--set` value as the setting takes it: a tuple setting's values comma-separated
    (`generate.target_words=4000,8000`), as `--sweep` and the commands' own options take
    them; any other setting's value as given, for the settings' model to read."""
    field = field_at(key)
    if field and get_origin(field.annotation) is tuple:
        return [v.strip() for v in value.split(",") if v.strip()]
    return value


def check_names(settings: Settings) -> None:
    """The methods the settings name exist: a typo fails here, not at the generate stage."""
    from lilo.flows._preflight import PreflightError
    from lilo.flows._preflight import check_names as check

    try:
        check(settings)
    except PreflightError as exc:
        raise CLIError(str(exc)) from exc
