"""Fetch stage: surveys, their references, then the papers they cite (docs/design.md §3)."""

from __future__ import annotations

from dataclasses import asdict
from datetime import UTC, datetime

from prefect import flow, task
from prefect.cache_policies import NO_CACHE

from lilo.flows._stage import StageReport, stage
from lilo.tasks.config import Settings
from lilo.tasks.fetch.eprint import fetch_eprints
from lilo.tasks.fetch.metadata import PaperMeta, fetch_metadata, strip_version
from lilo.tasks.records import Quarantine, RawSource
from lilo.tasks.samples.references import Reference
from lilo.tasks.samples.survey import SurveyRead, read_survey
from lilo.tasks.samples.title_search import retry_due
from lilo.warehouse import Warehouse
from lilo.warehouse.queries.papers import raw_sources
from lilo.warehouse.queries.surveys import cited_papers, read_surveys, searched_references

__all__ = ["fetch_flow"]

_QUARANTINE_KEY = ("item_id", "stage")


@task(name="fetch-metadata", cache_policy=NO_CACHE)
def fetch_metadata_task(ids: list[str], settings: Settings) -> list[PaperMeta]:
    """Retries and pacing live in the HTTP layer (tasks/fetch/_http.py)."""
    return fetch_metadata(ids, settings.arxiv) if ids else []


@task(name="fetch-eprints", cache_policy=NO_CACHE)
def fetch_eprints_task(
    ids: list[str], settings: Settings, meta: list[PaperMeta], role: str
) -> tuple[list[RawSource], list[Quarantine]]:
    by_id = {m.arxiv_id: m for m in meta}
    return fetch_eprints(ids, settings, meta=by_id, role=role)


@task(name="read-surveys", cache_policy=NO_CACHE)
def read_surveys_task(
    raws: list[RawSource], settings: Settings, earlier: dict[str, dict[str, Reference]]
) -> list[SurveyRead | Quarantine]:
    """`earlier`: the stored references of surveys read again, for their title searches."""
    return [read_survey(raw, settings, earlier.get(raw.arxiv_id)) for raw in raws]


@flow(name="fetch", log_prints=True)
def fetch_flow(settings: Settings, run_id: str) -> StageReport:
    """Fetch the configured surveys, read their references and fetch every resolved paper.
    A survey read before is read again when one of its title searches failed and is due
    for a retry (`retry_due`)."""
    with stage("fetch", settings, run_id) as (report, wh):
        surveys = _fetch(wh, list(settings.surveys), "survey", settings, report)
        read = read_surveys(wh)
        earlier = _searches_due(wh, settings)
        if earlier:
            report.note(f"title searches due again for surveys {', '.join(sorted(earlier))}")
        todo = [s for s in surveys if s.arxiv_id not in read or s.arxiv_id in earlier]
        for result in read_surveys_task(todo, settings, earlier):
            if isinstance(result, Quarantine):
                report.write(wh, "quarantine", [result], _QUARANTINE_KEY, update=True)
            else:
                with wh.transaction():
                    _save_survey(wh, result, report)
                    wh.clear_quarantine("fetch", [result.survey_id])
        _fetch(wh, cited_papers(wh, list(settings.surveys)), "paper", settings, report)
    return report


def _fetch(
    wh: Warehouse, ids: list[str], role: str, settings: Settings, report: StageReport
) -> list[RawSource]:
    """Fetch what is not stored yet (a rerun downloads nothing); returns the stored sources.
    Stored sources are keyed by the bare id: `2209.08940v2` is found as `2209.08940`.
    Sources are written a chunk (`arxiv.page_size` ids) at a time, so an interrupted fetch
    keeps what it downloaded and the next run asks only for the rest."""
    stored = raw_sources(wh)
    missing = [i for i in ids if strip_version(i) not in stored]
    size = settings.arxiv.page_size
    fetched = failed = 0
    for chunk in (missing[start : start + size] for start in range(0, len(missing), size)):
        raws, quarantine = _fetch_chunk(chunk, role, settings, report)
        with wh.transaction():
            report.write(wh, "stg_raw_sources", raws, ("arxiv_id",))
            report.write(wh, "quarantine", quarantine, _QUARANTINE_KEY, update=True)
            wh.clear_quarantine("fetch", [r.arxiv_id for r in raws])
        stored.update((r.arxiv_id, r) for r in raws)
        fetched, failed = fetched + len(raws), failed + len(quarantine)
    if missing:
        report.note(
            f"{role}s: {fetched} fetched, {failed} failed, {len(ids) - len(missing)} stored before"
        )
    return [stored[bare] for bare in map(strip_version, ids) if bare in stored]


def _fetch_chunk(
    ids: list[str], role: str, settings: Settings, report: StageReport
) -> tuple[list[RawSource], list[Quarantine]]:
    state = fetch_metadata_task(ids, settings, return_state=True)
    if state.is_completed():
        meta = state.result()
    else:
        # Metadata only adds titles and categories: the e-prints are still worth fetching,
        # and the cleaned text supplies the title.
        meta = []
        report.note(f"{role} metadata unavailable, fetching e-prints without it: {state.message}")
    return fetch_eprints_task(ids, settings, meta, role)


def _searches_due(wh: Warehouse, settings: Settings) -> dict[str, dict[str, Reference]]:
    """Survey id -> its stored searched references (by cite key), for each configured survey
    with a failed title search due for a retry; empty when title search is off."""
    if not (settings.samples.title_search and settings.arxiv.api_url):
        return {}
    searched: dict[str, dict[str, Reference]] = {}
    for row in searched_references(wh, list(settings.surveys)):
        ref = Reference(
            key=row["cite_key"],
            title=row["title"] or "",
            arxiv_id=row["arxiv_id"],
            how=row["how"],
            title_searches=row["title_searches"] or 0,
            title_searched_at=row["title_searched_at"],
            title_search_error=row["title_search_error"],
        )
        searched.setdefault(row["survey_id"], {})[ref.key] = ref
    now = datetime.now(UTC).replace(tzinfo=None)
    return {
        survey: refs
        for survey, refs in searched.items()
        if any(retry_due(r, now) for r in refs.values())
    }


def _save_survey(wh: Warehouse, survey: SurveyRead, report: StageReport) -> None:
    """A survey's row, references and citation groups, replacing those of an earlier read."""
    resolved = sum(1 for r in survey.references if r.arxiv_id)
    row = {
        "survey_id": survey.survey_id,
        "title": survey.title,
        "main_file": survey.main_file,
        "n_references": len(survey.references),
        "n_resolved": resolved,
        "bibliography": list(survey.bibliography),
    }
    report.write(wh, "dim_surveys", [row], ("survey_id",), update=True)
    references = [
        {**{f: v for f, v in asdict(r).items() if f != "key"}, "cite_key": r.key}
        for r in survey.references
    ]
    extra = {"survey_id": survey.survey_id}
    key = ("survey_id", "cite_key")
    report.write(wh, "dim_survey_references", references, key, update=True, extra=extra)
    wh.delete("dim_citation_groups", "survey_id", [survey.survey_id])
    report.write(wh, "dim_citation_groups", survey.groups, ("group_id",), extra=extra)
    report.note(
        f"survey {survey.survey_id}: {resolved}/{len(survey.references)} references resolved, "
        f"{len(survey.groups)} citation groups"
    )
