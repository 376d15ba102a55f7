"""What the command modules share, each from the module that holds it: options
(`_args`), one-line errors (`_errors`), settings (`_settings`), the warehouse and published
copy (`_warehouse`), Prefect (`_prefect`), the pipeline run and its summary
(`_pipeline_run`), the progress bar (flows/_bar.py)."""

from lilo.flows._bar import progress
from lilo.flows.cli._args import (
    Parser,
    add_common_args,
    add_pipeline_args,
    add_publish_args,
    add_renamed_arg,
)
from lilo.flows.cli._errors import CLIError
from lilo.flows.cli._pipeline_run import print_leaderboard, print_summary, run_pipeline_flow
from lilo.flows.cli._prefect import running_flows, start_prefect_early
from lilo.flows.cli._settings import check_names, settings_from_args
from lilo.flows.cli._warehouse import published_results, require_warehouse

__all__ = [
    "CLIError",
    "Parser",
    "add_common_args",
    "add_pipeline_args",
    "add_publish_args",
    "add_renamed_arg",
    "check_names",
    "print_leaderboard",
    "print_summary",
    "progress",
    "published_results",
    "require_warehouse",
    "run_pipeline_flow",
    "running_flows",
    "settings_from_args",
    "start_prefect_early",
]
