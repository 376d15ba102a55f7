"""`lilo reproduce ral-writer`: every table and figure of the RAL-Writer paper from one
command (flows/reproduce.py)."""

from __future__ import annotations

import argparse
import time
from typing import Any

from lilo.flows.cli._args import add_common_args, add_old_name, lengths
from lilo.flows.cli._errors import CLIError
from lilo.flows.cli._prefect import running_flows, start_prefect_early
from lilo.flows.cli._settings import check_names, settings_from_args
from lilo.flows.cli._warehouse import require_warehouse

__all__ = ["register"]


def cmd_reproduce(args: argparse.Namespace) -> int:
    from lilo.flows.reproduce import estimate_rows, plan_reproduction, reproduce_ral_writer
    from lilo.tasks.config_loading import flow_parameters
    from lilo.tasks.reproduce.plan import PAPER_LENGTHS

    settings = settings_from_args(args)
    require_warehouse(settings)
    check_names(settings)
    lengths = tuple(args.lengths or PAPER_LENGTHS)
    if not args.dry_run:
        start_prefect_early(settings)
    try:
        planned = plan_reproduction(settings, lengths)
    except ValueError as exc:
        raise CLIError(str(exc)) from exc
    rows = estimate_rows(planned)
    print(f"lilo reproduce ral-writer on {settings.dataset_version}, lengths {list(lengths)}:")
    for r in rows:
        print(
            f"  {r['run']:<7} {r['generations']:>4} generations, ~{r['calls_estimated']} LLM "
            f"calls, ~{r['tokens_in_estimated']:,} tokens in, ~{r['tokens_out_estimated']:,} "
            f"out ({r['estimated_from']}): {r['serves']}"
        )
    total = {k: sum(r[k] for r in rows) for k in ("calls_estimated", "tokens_in_estimated")}
    print(
        f"  estimate: {total['calls_estimated']} LLM calls, "
        f"{total['tokens_in_estimated']:,} input tokens"
    )
    if args.dry_run:
        return 0
    started = time.perf_counter()
    with running_flows(getattr(args, "debug", False)):
        result = reproduce_ral_writer(flow_parameters(settings), list(lengths), rows)
    made = sum(c["calls_made"] for c in result["cost"])
    cached = sum(c["calls_cached"] for c in result["cost"])
    print(
        f"made {made} LLM calls ({cached} served from cache) against ~"
        f"{total['calls_estimated']} estimated, in {time.perf_counter() - started:.0f} s"
    )
    print(f"report: {result['page']}")
    return 0


def register(sub: Any) -> None:
    p = sub.add_parser(
        "reproduce",
        help="every table and figure of a paper (ral-writer) from one command",
        description="Plans the runs the RAL-Writer paper's Tables 2-4 and Figures 6-8 need on "
        "a dataset version, prints their estimated LLM calls and tokens, runs them (cached, "
        "resumable) and writes one report page with the published numbers beside lilo's.",
    )
    p.add_argument("paper", choices=("ral-writer",), help="the paper to reproduce")
    add_common_args(p)
    p.add_argument(
        "--dataset",
        metavar="NAME",
        help="the dataset version (default: the setting dataset_version; `lilo datasets` "
        "lists them)",
    )
    p.add_argument("--samples", type=int, metavar="N", help="only its first N samples")
    p.add_argument(
        "--target-words",
        dest="lengths",  # the runs' lengths, each run's own setting (not generate.target_words)
        type=lengths,
        help="comma-separated target lengths (default the paper's, 4000,8000,16000)",
    )
    add_old_name(p, "--lengths", "--target-words", dest="lengths", type=lengths)
    p.add_argument(
        "--dry-run", action="store_true", help="print the plan and its estimate, run nothing"
    )
    p.set_defaults(func=cmd_reproduce)
