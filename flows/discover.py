"""Survey discovery (issue: from surveys to samples): take survey ids or an arXiv query and
read one survey after another (fetch -> references -> clean its papers -> samples) until the
dataset would hold `samples.target_samples`; then write that dataset version once."""

from __future__ import annotations

from dataclasses import dataclass, field

from prefect import flow, task
from prefect.cache_policies import NO_CACHE

from lilo.flows._run import RunRecord, recorded_run
from lilo.flows._stage import log, open_warehouse
from lilo.flows.clean import clean_flow
from lilo.flows.fetch import fetch_flow
from lilo.flows.samples import plan_samples, samples_flow
from lilo.tasks.config import Settings
from lilo.tasks.fetch.metadata import search
from lilo.warehouse.queries.datasets import dataset_samples
from lilo.warehouse.queries.surveys import survey_failure

__all__ = ["Discovery", "discover_flow"]


@dataclass
class Discovery:
    """What discovery looked at and kept; `samples` is the dataset version's count."""

    dataset_version: str
    target: int
    kept: list[str] = field(default_factory=list)  # surveys whose papers made samples
    skipped: dict[str, str] = field(default_factory=dict)  # survey -> why not kept
    samples: int = 0


@task(name="find-surveys", cache_policy=NO_CACHE, retries=2, retry_delay_seconds=5)
def find_surveys_task(query: str, settings: Settings) -> list[str]:
    return [
        m.arxiv_id for m in search(query, settings.samples.discover_max_surveys, settings.arxiv)
    ]


@flow(name="discover", log_prints=True)
def discover_flow(
    settings: Settings,
    survey_ids: list[str] | None = None,
    query: str | None = None,
) -> Discovery:
    """Surveys in the order given (or arXiv's order for `query`), each kept only if it adds
    samples; stops at the target. An existing dataset version is reported, not extended.
    The run is recorded in `runs` like a pipeline run."""
    with recorded_run(settings, "discover") as run:
        return _discover(settings, run, survey_ids, query)


def _discover(
    settings: Settings, run: RunRecord, survey_ids: list[str] | None, query: str | None
) -> Discovery:
    candidates = list(survey_ids or []) or (find_surveys_task(query, settings) if query else [])
    target = settings.samples.target_samples
    found = Discovery(settings.dataset_version, target)
    with open_warehouse(settings) as wh:
        written = dataset_samples(wh, settings.dataset_version)
    if written is not None:
        found.samples = written
        log.warning("dataset %s exists: immutable, not extended", settings.dataset_version)
        return found
    for survey_id in candidates:
        if found.samples >= target:
            break
        trial = settings.with_overrides({"surveys": [*found.kept, survey_id]})
        run.stage(fetch_flow, trial)
        run.stage(clean_flow, trial)
        with open_warehouse(settings) as wh:
            reason = survey_failure(wh, survey_id)
            samples = 0 if reason else len(plan_samples(wh, trial, list(trial.surveys))[0])
        if reason or samples <= found.samples:
            found.skipped[survey_id] = reason or "no new samples"
            continue
        found.kept.append(survey_id)
        found.samples = samples
        log.info("discover: %s kept, %d/%d samples", survey_id, samples, target)
    if found.kept:
        run.stage(samples_flow, settings.with_overrides({"surveys": found.kept}))
    return found
