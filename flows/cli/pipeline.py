"""`lilo demo`, `lilo run` and `lilo failures`: the pipeline and its results
(`lilo leaderboard` is flows/cli/leaderboard.py)."""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import Any

from lilo.flows.cli._args import add_common_args, add_pipeline_args, add_publish_args
from lilo.flows.cli._errors import CLIError
from lilo.flows.cli._local_model import add_local_model_arg, served
from lilo.flows.cli._pipeline_run import print_summary, run_pipeline_flow
from lilo.flows.cli._prefect import start_prefect_early
from lilo.flows.cli._settings import check_names, settings_from_args
from lilo.flows.cli._stop import stoppable
from lilo.flows.cli._warehouse import published_results, require_warehouse
from lilo.tasks.config_loading import Select

__all__ = ["register"]

# The small demo corpus (`--local-model`): prose at a fifth, papers of 950-1,200 words,
# its too-short paper 780: the cleaner's floor goes between.
SMALL_CORPUS = 0.2
SMALL_MIN_WORDS = 850


@stoppable
def cmd_demo(args: argparse.Namespace) -> int:
    from lilo.tasks.synthetic import Mirror, write_corpus

    local = args.local_model is not None
    # `--local-model`: a small demo (the `local-model` profile) unless a profile is named.
    profile: list[tuple[Select, Any]] = (
        [(lambda s: s.profile, "local-model")] if local and not args.profile else []
    )
    settings = settings_from_args(args, *profile)
    check_names(settings)
    start_prefect_early(settings)
    corpus_dir = settings.data_dir / ("demo-corpus-small" if local else "demo-corpus")
    # A topic's own co-citations hold 4 papers: larger samples need the survey to cite more
    # papers together (the demo's 8-paper permutation study: samples.papers_per_sample=8).
    size = settings.samples.papers_per_sample
    # A small model reads the small corpus (papers of about 1,000 words, its own ids).
    scale = SMALL_CORPUS if local else 1.0
    manifest = write_corpus(corpus_dir, together=size if size > 4 else 0, scale=scale)
    survey_ids = [item.arxiv_id for item in manifest.items if item.role == "survey"]
    print(f"demo corpus: {len(manifest.items)} e-prints in {corpus_dir}")
    # Units in other processes (Dask) cannot start the local model: it starts at once.
    from lilo.flows._units import elsewhere

    at_once = elsewhere(settings.runner)
    with (
        Mirror(corpus_dir) as mirror,
        served(args.local_model, settings.data_dir, settings.llm.api, at_once=at_once) as model,
    ):
        settings = settings.with_overrides(
            {
                "surveys": survey_ids,
                "arxiv.api_url": mirror.api_url,
                "arxiv.eprint_url": mirror.eprint_url,
                "arxiv.delay_s": 0.0,
                "arxiv.backoff_s": 0.1,
                **({"clean.min_words": SMALL_MIN_WORDS} if local else {}),
                **model,
            }
        )
        print(f"loopback arXiv mirror at {mirror.base_url}; running the pipeline ...")
        return _run(settings, args.debug)


@stoppable
def cmd_run(args: argparse.Namespace) -> int:
    if args.dataset and args.survey:
        raise CLIError(
            "--survey builds a dataset version from surveys, --dataset runs on one that exists: "
            "give one of them"
        )
    if args.dataset:
        return _run_dataset(args)
    surveys: list[tuple[Select, Any]] = [(lambda s: s.surveys, args.survey)] if args.survey else []
    settings = settings_from_args(args, *surveys)
    if not settings.surveys:
        raise CLIError(
            "no surveys to start from: pass --survey ARXIV_ID (repeatable), set LILO_SURVEYS, "
            "or try `lilo demo` for the offline demo corpus"
        )
    check_names(settings)
    if args.dry_run:
        return _dry_run(settings, surveys=True)
    start_prefect_early(settings)
    return _run(settings, args.debug)


def _run_dataset(args: argparse.Namespace) -> int:
    """`lilo run --dataset NAME [--samples N]`: methods and scores on an existing version."""
    from lilo.flows._load import check_dataset_version
    from lilo.warehouse.read_only import read_first

    settings = settings_from_args(args)
    require_warehouse(settings)
    check_names(settings)
    # Before Prefect's server starts: a mistyped name is one line at once (the run checks
    # again, on the warehouse, when no reader let this look in).
    with read_first(settings.db_path, settings.published_path) as con:
        if con is not None:
            check_dataset_version(con, settings)
    if args.dry_run:
        return _dry_run(settings)
    start_prefect_early(settings)
    return _run(settings, args.debug, dataset=True)


def _dry_run(settings: Any, surveys: bool = False) -> int:
    """`--dry-run`: the run's calls and cost planned and printed, nothing sent or written
    but the plan beside the cache (flows/dry_run.py)."""
    from lilo.flows.pipeline import dry_run_plan

    dry_run_plan(settings, surveys)
    return 0


def _run(settings: Any, debug: bool, dataset: bool = False) -> int:
    started = time.perf_counter()
    result = run_pipeline_flow(settings, dataset, debug)
    print_summary(result, time.perf_counter() - started)
    _beside_plan(settings, result)
    return 0 if result["status"] == "completed" else 1


def _beside_plan(settings: Any, result: dict[str, Any]) -> None:
    """The run's totals beside the plan a dry run with the same settings kept."""
    from lilo.flows.dry_run import kept_plan

    plan = kept_plan(settings, result["config_hash"])
    if plan is None:
        return
    total = plan["total"]
    print(
        f"planned by --dry-run: {total['calls'] - total['cached']} calls to send, "
        f"{total['tokens_in']:,} tokens in, at most {total['max_out']:,} out; this run: "
        f"{result['llm_calls_made']} calls made ({result['llm_calls_cached']} from cache), "
        f"{result['tokens_in']:,} tokens in, {result['tokens_out']:,} out"
    )


def cmd_failures(args: argparse.Namespace) -> int:
    """Every failed generation or score of the published results, and every sample they
    expected that waits for review (its method and length `-`: all of them), with the reason;
    then the count. All on stdout: it is the command's result."""
    from lilo.tasks.printable import printable
    from lilo.warehouse.queries.failures import failure_rows
    from lilo.warehouse.queries.reviews import waiting_note

    if args.forget_windows:
        return _forget_windows(settings_from_args(args).cache_dir / "llm")
    with published_results(settings_from_args(args)) as con:
        rows = failure_rows(con)
        waiting = "" if rows else waiting_note(con)
    for row in rows:
        print("\t".join("-" if v is None else printable(v, one_line=True) for v in row))
    print(f"{len(rows)} failure{'' if len(rows) == 1 else 's'}")
    if waiting:
        print(waiting, file=sys.stderr)
    return 0


def _forget_windows(cache: Path) -> int:
    """`lilo failures --forget-windows`: the windows learned from servers' rejections
    removed (tasks/llm/window.py), so that the next run asks the servers again."""
    from lilo.tasks.llm.window import forget_windows

    removed = forget_windows(cache)
    for path in removed:
        print(f"forgot {path}")
    print(
        f"{len(removed)} learned context window{'' if len(removed) == 1 else 's'} forgotten: "
        "the next run sends their prompts to the servers again"
    )
    return 0


def register(sub: Any) -> None:
    demo = sub.add_parser(
        "demo",
        help="the whole pipeline on the built-in synthetic corpus, offline",
        description="Writes the synthetic corpus, serves it from a loopback arXiv mirror and runs "
        "every stage against it with the offline engine. Run it twice: the second run makes no "
        "LLM calls and adds no rows but its run record.",
    )
    add_common_args(demo)
    add_pipeline_args(demo)
    add_publish_args(demo)
    add_local_model_arg(demo, "runs a small demo (profile local-model)")
    demo.set_defaults(func=cmd_demo)

    run = sub.add_parser(
        "run",
        help="the pipeline from real surveys (arXiv ids), or methods and scores on an "
        "existing dataset version (--dataset)",
        description="With --survey (or LILO_SURVEYS): fetch the surveys and their papers from "
        "arXiv, clean them, build samples, generate and review QA pairs, then run the methods "
        "and score them. With --dataset: only the methods and scores, on a dataset version "
        "that exists (`lilo datasets` lists them). A run ends with its stages' times, the "
        "leaderboard and where the warehouse is; run it again to resume (nothing is paid "
        "twice).",
    )
    add_common_args(run)
    add_pipeline_args(run)
    add_publish_args(run)
    run.add_argument(
        "--survey", action="append", metavar="ARXIV_ID", help="a survey's arXiv id (repeatable)"
    )
    run.add_argument(
        "--dataset",
        metavar="NAME",
        help="run methods and scores on this existing dataset version (e.g. longinoutbench) "
        "instead of building one from surveys",
    )
    run.add_argument(
        "--samples",
        type=int,
        metavar="N",
        help="only the dataset version's first N samples (a quick look)",
    )
    run.add_argument(
        "--max-tokens",
        type=int,
        metavar="N",
        help="stop the run before a call would take its LLM tokens (in + out, cached calls "
        "free) past N; a rerun with a larger cap continues (setting runner.max_tokens)",
    )
    run.add_argument(
        "--max-cost",
        type=float,
        metavar="AMOUNT",
        help="stop the run before a call would take its cost (at llm.prices and "
        "judge.prices) past AMOUNT (setting runner.max_cost)",
    )
    run.add_argument(
        "--dry-run",
        action="store_true",
        help="plan the run and print what it would send (calls by stage and method, the "
        "cache's share, input tokens, output tokens at their budgets, the cost range at "
        "llm.prices and judge.prices); no model is called and the warehouse is not written",
    )
    run.set_defaults(func=cmd_run)

    failures = sub.add_parser(
        "failures",
        help="every failed generation or score of the published results, and why",
        description="One tab-separated line per failure of the default result version: "
        "stage, method, target words, sample, reason (`-` where a column does not apply: a "
        "sample waiting for review misses every method and length); then the count. Reasons "
        "quote endpoints and judges: control characters are shown as \\uXXXX and line breaks "
        "as spaces, so each failure is one line.",
    )
    failures.add_argument(
        "--forget-windows",
        action="store_true",
        help="instead, forget the context windows learned from servers' rejections (the "
        "`*.window.json` files beside the LLM cache): a failure `context_exceeded` that says "
        "`(learned)` is then sent to the server again by the next run",
    )
    add_common_args(failures)
    failures.set_defaults(func=cmd_failures)
