"""`lilo demo`, `lilo run` and `lilo failures`: the pipeline and its results
(`lilo leaderboard` is flows/cli/leaderboard.py)."""

from __future__ import annotations

import argparse
import time
from typing import Any

from lilo.flows.cli._common import (
    CLIError,
    add_common_args,
    add_pipeline_args,
    add_publish_args,
    check_names,
    print_summary,
    published_results,
    require_warehouse,
    run_pipeline_flow,
    settings_from_args,
    start_prefect_early,
)
from lilo.flows.cli._local_model import add_local_model_arg, served
from lilo.flows.cli._stop import stoppable

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
    settings = settings_from_args(
        args, **({"profile": "local-model"} if local and not args.profile else {})
    )
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
    with Mirror(corpus_dir) as mirror, served(args.local_model, settings.data_dir) as model:
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
    if args.dataset:
        return _run_dataset(args)
    extra: dict[str, Any] = {"surveys": args.survey} if args.survey else {}
    settings = settings_from_args(args, **extra)
    if not settings.surveys:
        raise CLIError(
            "no surveys to start from: pass --survey ARXIV_ID (repeatable), set LILO_SURVEYS, "
            "or try `lilo demo` for the offline demo corpus"
        )
    check_names(settings)
    start_prefect_early(settings)
    return _run(settings, args.debug)


def _run_dataset(args: argparse.Namespace) -> int:
    """`lilo run --dataset NAME [--samples N]`: methods and scores on an existing version."""
    extra: dict[str, Any] = {"dataset_version": args.dataset}
    if args.samples is not None:
        extra["generate.samples"] = args.samples
    settings = settings_from_args(args, **extra)
    require_warehouse(settings)
    check_names(settings)
    start_prefect_early(settings)
    try:
        return _run(settings, args.debug, dataset=True)
    except ValueError as exc:  # no such dataset version: the message lists the known ones
        raise CLIError(str(exc)) from exc


def _run(settings: Any, debug: bool, dataset: bool = False) -> int:
    started = time.perf_counter()
    result = run_pipeline_flow(settings, dataset, debug)
    print_summary(result, time.perf_counter() - started)
    return 0 if result["status"] == "completed" else 1


def cmd_failures(args: argparse.Namespace) -> int:
    """Every failed generation or score of the published results, and every sample they
    expected that waits for review (its method and length `-`: all of them), with the reason;
    then the count. All on stdout: it is the command's result."""
    from lilo.warehouse.queries.failures import failure_rows

    with published_results(settings_from_args(args)) as con:
        rows = failure_rows(con)
    for row in rows:
        print("\t".join("-" if v is None else str(v) for v in row))
    print(f"{len(rows)} failures")
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
    )
    add_common_args(run)
    add_pipeline_args(run)
    add_publish_args(run)
    run.add_argument("--survey", action="append", help="a survey's arXiv id (repeatable)")
    run.add_argument(
        "--dataset",
        help="run methods and scores on this existing dataset version (e.g. longinoutbench) "
        "instead of building one from surveys",
    )
    run.add_argument(
        "--samples", type=int, help="with --dataset: only its first N samples (a quick look)"
    )
    run.set_defaults(func=cmd_run)

    failures = sub.add_parser(
        "failures", help="every failed generation or score of the published results, and why"
    )
    add_common_args(failures)
    failures.set_defaults(func=cmd_failures)
