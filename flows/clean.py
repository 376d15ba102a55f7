"""Clean and validate stage: raw sources -> dim_papers, or quarantine with a reason (§4, §11)."""

from __future__ import annotations

import functools
from dataclasses import replace
from pathlib import Path

from prefect import flow, task
from prefect.cache_policies import NO_CACHE

from lilo.flows._stage import StageReport, stage
from lilo.tasks.clean import clean_paper
from lilo.tasks.clean.latex import CLEANER_VERSION
from lilo.tasks.config import Settings
from lilo.tasks.files import temp_dir
from lilo.tasks.parallel import map_processes
from lilo.tasks.records import PaperText, Quarantine, RawSource
from lilo.tasks.validate import Validation, validate_papers
from lilo.warehouse.queries.papers import hashes_of_others, sources_to_clean

__all__ = ["clean_flow"]


@task(name="clean-papers", cache_policy=NO_CACHE)
def clean_papers_task(raws: list[RawSource], settings: Settings) -> list[PaperText | Quarantine]:
    """Each paper in a worker process that is stopped once it takes `clean.max_seconds`:
    one hostile source cannot hold up the others, nor a rerun (it stays quarantined)."""
    with temp_dir(settings.data_dir, "clean") as tmp:
        return map_processes(
            functools.partial(clean_paper, work_dir=Path(tmp), limits=settings.clean),
            raws,
            workers=2,
            limit_s=settings.clean.max_seconds,
            on_failure=_failed,
        )


def _failed(raw: RawSource, why: str, timed_out: bool) -> Quarantine:
    reason = "clean_timeout" if timed_out else "clean_error"
    detail = f"cleaning {why}" + (" (clean.max_seconds)" if timed_out else "")
    return Quarantine(raw.arxiv_id, stage="clean", reason=reason, detail=detail)


@task(name="validate-papers", cache_policy=NO_CACHE)
def validate_papers_task(
    papers: list[PaperText], settings: Settings, run_id: str, earlier: dict[str, str]
) -> Validation:
    """GX data docs for the run go to `<data_dir>/data_docs/<run_id>/index.html`."""
    docs_dir = settings.data_dir / "data_docs" / run_id
    return validate_papers(papers, settings.clean, docs_dir, earlier=earlier)


def _version_tag() -> str:
    """Starts the detail of a clean/validate quarantine row: a new cleaner retries the paper."""
    return f"cleaner {CLEANER_VERSION}: "


@flow(name="clean", log_prints=True)
def clean_flow(settings: Settings, run_id: str) -> StageReport:
    """Clean every fetched paper not yet cleaned by this cleaner version, then validate."""
    with stage("clean", settings, run_id) as (report, wh):
        todo = sources_to_clean(wh, CLEANER_VERSION, _version_tag())
        if not todo:
            report.note("nothing new to clean")
            return report
        results = clean_papers_task(todo, settings)
        # Stamped with the version this flow selects by: the workers import their own copy.
        papers = [
            replace(r, cleaner_version=CLEANER_VERSION) for r in results if isinstance(r, PaperText)
        ]
        quarantine = [r for r in results if isinstance(r, Quarantine)]
        earlier = hashes_of_others(wh, [raw.arxiv_id for raw in todo])
        validation = validate_papers_task(papers, settings, run_id, earlier)
        quarantine += validation.quarantine
        passed = set(validation.passed)
        valid = [p for p in papers if p.paper_id in passed]
        failed = [q.item_id for q in quarantine]
        with wh.transaction():
            report.write(wh, "dim_papers", valid, ("paper_id",), update=True)
            for name in ("clean", "validate"):
                wh.clear_quarantine(name, passed)
            # A paper the current cleaner rejects leaves dim_papers with its old text.
            wh.delete("dim_papers", "paper_id", failed)
            tagged = [replace(q, detail=f"{_version_tag()}{q.detail}") for q in quarantine]
            report.write(wh, "quarantine", tagged, ("item_id", "stage"), update=True)
        summary = {
            "suite": "papers",
            "success": not validation.quarantine,
            "summary": validation.summary,
        }
        report.write(wh, "validation_results", [summary], ("run_id", "suite"))
        report.note(f"{len(passed)} papers cleaned and valid, {len(quarantine)} quarantined")
        for q in quarantine:
            report.note(f"quarantined {q.item_id} ({q.stage}): {q.reason}")
    return report
