"""The top-level flow: every stage in order, one run record (docs/design.md §2)."""

from __future__ import annotations

from typing import Any, Literal

from prefect import flow

from lilo.flows._load import check_dataset_version
from lilo.flows._preflight import preflight
from lilo.flows._run import RunFailed, recorded_run
from lilo.flows._stage import open_warehouse
from lilo.flows.clean import clean_flow
from lilo.flows.fetch import fetch_flow
from lilo.flows.generate import generate_flow
from lilo.flows.judge_repeats import judge_repeats_flow
from lilo.flows.materialize import materialize_flow
from lilo.flows.qa import qa_flow
from lilo.flows.samples import samples_flow
from lilo.flows.score import score_flow
from lilo.tasks.config import Settings
from lilo.tasks.config_loading import run_settings
from lilo.tasks.errors import InputError
from lilo.warehouse.queries.datasets import dataset_surveys
from lilo.warehouse.queries.quarantine import fetch_failures
from lilo.warehouse.queries.surveys import read_surveys

__all__ = [
    "DATASET_STAGES",
    "STAGES",
    "lilo_pipeline",
    "lilo_run_dataset",
    "check_surveys",
    "dry_run_plan",
    "run_dataset",
    "run_pipeline",
]

STAGES = (
    fetch_flow,
    clean_flow,
    samples_flow,
    qa_flow,
    generate_flow,
    score_flow,
    judge_repeats_flow,
    materialize_flow,
)
# A run on an existing dataset version (an imported benchmark): no fetching, no new samples.
DATASET_STAGES = (generate_flow, score_flow, judge_repeats_flow, materialize_flow)


@flow(name="lilo-pipeline", log_prints=True)
def lilo_pipeline(
    surveys: list[str] | None = None,
    review: Literal["auto", "manual"] | None = None,
    methods: list[str] | None = None,
    target_words: list[int] | None = None,
    overrides: dict[str, Any] | None = None,
    dry_run: bool = False,
) -> dict[str, Any]:
    """Fetch -> clean -> samples -> QA -> generate -> score -> materialize.

    Parameters left empty keep the worker's configuration (its LILO_CONFIG file, then its
    LILO_* environment). `overrides` takes dotted settings that shape the run, e.g.
    {"llm.model": "gpt-4o", "generate.ral.k": 8}; folders, endpoints and keys are the
    worker's own (`run_settings` refuses them). `dry_run`: the run's calls and cost planned
    on the samples the dataset version holds now, nothing sent (flows/dry_run.py).
    """
    given = {
        "surveys": surveys,
        "qa.review": review,
        "generate.methods": methods,
        "generate.target_words": target_words,
    }
    settings = run_settings(
        {**(overrides or {}), **{k: v for k, v in given.items() if v is not None}}
    )
    if dry_run:
        return dry_run_plan(settings, surveys=True)
    return run_pipeline(settings)


def run_pipeline(settings: Settings) -> dict[str, Any]:
    """The stages over one settings object, with the run record kept up to date."""
    if not settings.surveys:
        raise InputError(
            "no surveys to build from: pass `surveys` (arXiv ids), set LILO_SURVEYS='[\"id\"]' "
            "on the worker, or `surveys = [...]` in the LILO_CONFIG file"
        )
    preflight(settings)
    with recorded_run(settings, "lilo-pipeline") as run:
        for stage_flow in STAGES:
            run.stage(stage_flow)
            if stage_flow is fetch_flow:
                check_surveys(settings)
    return run.summary()


def check_surveys(settings: Settings) -> None:
    """After fetching: a run builds and publishes only from the surveys it was asked for.
    RunFailed, before any later stage, when none of them could be read (which ids, and
    why), or when the dataset version exists and was built from other surveys."""
    asked = list(dict.fromkeys(settings.surveys))
    with open_warehouse(settings) as wh:
        read = read_surveys(wh)
        why = fetch_failures(wh, asked)
        built = dataset_surveys(wh, settings.dataset_version)
    if not any(s in read for s in asked):
        failed = "; ".join(f"{s} ({why.get(s, 'not fetched')})" for s in asked)
        raise RunFailed(
            f"no survey could be read: {failed}; nothing was generated or published: check "
            "the ids, or run again later if a download failed"
        )
    if built is not None and set(built) != set(asked):
        raise RunFailed(
            f"dataset version {settings.dataset_version!r} was built from surveys "
            f"{', '.join(built)}, not {', '.join(asked)}: a dataset version never "
            "changes; name a new one with --set dataset_version=NAME"
        )


@flow(name="lilo-run-dataset", log_prints=True)
def lilo_run_dataset(
    dataset: str,
    samples: int | None = None,
    overrides: dict[str, Any] | None = None,
    dry_run: bool = False,
) -> dict[str, Any]:
    """Generate -> score -> materialize on an existing dataset version (e.g. an imported
    LongInOutBench), the first `samples` samples only when given; `overrides` and
    `dry_run` as for `lilo_pipeline`."""
    given = {"dataset_version": dataset, "generate.samples": samples}
    settings = run_settings(
        {**(overrides or {}), **{k: v for k, v in given.items() if v is not None}}
    )
    if dry_run:
        with open_warehouse(settings) as wh:
            check_dataset_version(wh, settings)
        return dry_run_plan(settings)
    return run_dataset(settings)


def dry_run_plan(settings: Settings, surveys: bool = False) -> dict[str, Any]:
    """The run planned (flows/dry_run.py), kept beside the cache, printed and returned;
    `surveys`: the stages before generation are said to be left out."""
    from lilo.flows.dry_run import format_plan, keep_plan, plan_run

    plan = plan_run(settings)
    if surveys:
        plan.notes.append(
            "fetch, clean, samples and QA are not planned (their calls need the papers "
            "first): the plan covers the samples the dataset version holds now"
        )
    keep_plan(settings, plan)
    print("\n".join(format_plan(plan.as_dict())))
    return plan.as_dict()


def run_dataset(settings: Settings) -> dict[str, Any]:
    preflight(settings, arxiv=False)
    with open_warehouse(settings) as wh:
        check_dataset_version(wh, settings)
    with recorded_run(settings, "lilo-run-dataset") as run:
        for stage_flow in DATASET_STAGES:
            run.stage(stage_flow)
    return run.summary()
