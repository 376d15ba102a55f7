"""The top-level flow: every stage in order, one run record (DESIGN §2)."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal

from prefect import flow
from prefect.runtime import flow_run

from flows._stage import StageReport, log, open_warehouse
from flows.clean import clean_flow
from flows.fetch import fetch_flow
from flows.generate import generate_flow
from flows.materialize import materialize_flow
from flows.qa import qa_flow
from flows.samples import samples_flow
from flows.score import score_flow
from tasks.config import Settings, load_settings
from tasks.llm import make_client
from tasks.provenance import code_version

__all__ = ["STAGES", "lilo_pipeline", "run_pipeline"]

STAGES = (
    fetch_flow,
    clean_flow,
    samples_flow,
    qa_flow,
    generate_flow,
    score_flow,
    materialize_flow,
)


@flow(name="lilo-pipeline", log_prints=True)
def lilo_pipeline(
    surveys: list[str] | None = None,
    review: Literal["auto", "manual"] | None = None,
    methods: list[str] | None = None,
    target_words: list[int] | None = None,
    overrides: dict[str, Any] | None = None,
    config_path: str | None = None,
) -> dict[str, Any]:
    """Fetch -> clean -> samples -> QA -> generate -> score -> materialize.

    Parameters left empty keep the configuration's values (file, then LILO_* environment).
    `overrides` takes dotted settings, e.g. {"llm.backend": "openai", "llm.model": "gpt-4o"}.
    """
    given = {
        "surveys": surveys,
        "qa.review": review,
        "generate.methods": methods,
        "generate.target_words": target_words,
    }
    settings = load_settings(
        Path(config_path) if config_path else None,
        {**{k: v for k, v in given.items() if v is not None}, **(overrides or {})},
    )
    return run_pipeline(settings)


def run_pipeline(settings: Settings) -> dict[str, Any]:
    """The stages over one settings object, with the run record kept up to date."""
    if not settings.surveys:
        raise ValueError(
            "no surveys to build from: pass `surveys` (arXiv ids), set LILO_SURVEYS='[\"id\"]' "
            "on the worker, or `surveys = [...]` in the LILO_CONFIG file"
        )
    run_id = flow_run.get_id() or str(uuid.uuid4())
    started = datetime.now(UTC).replace(tzinfo=None)
    record: dict[str, Any] = {
        "run_id": run_id,
        "flow": "lilo-pipeline",
        "started_at": started,
        "status": "running",
        "config_hash": settings.config_hash(),
        "code_version": code_version(),
        "backbone": make_client(settings).backbone,
        "dataset_version": settings.dataset_version,
        "review_mode": settings.qa.review,
        "target_words": list(settings.generate.target_words),
        "settings": settings.model_dump(mode="json"),
    }
    with open_warehouse(settings) as wh:
        wh.upsert("runs", [record], ("run_id",), update=True)
    reports: list[StageReport] = []
    try:
        for stage_flow in STAGES:
            report = stage_flow(settings, run_id)
            reports.append(report)
            log.info(
                "%s done in %.1f s: %d LLM calls made, %d from cache, %d rows added",
                report.stage,
                report.seconds,
                report.llm_made,
                report.llm_cached,
                sum(report.rows_added.values()),
            )
    except BaseException as exc:
        _finish(settings, record, reports, "failed", f"{type(exc).__name__}: {exc}")
        raise
    return _finish(settings, record, reports, "completed", "")


def _finish(
    settings: Settings,
    record: dict[str, Any],
    reports: list[StageReport],
    status: str,
    message: str,
) -> dict[str, Any]:
    rows_added: dict[str, int] = {}
    for r in reports:
        for table, n in r.rows_added.items():
            rows_added[table] = rows_added.get(table, 0) + n
    record.update(
        finished_at=datetime.now(UTC).replace(tzinfo=None),
        status=status,
        llm_calls_made=sum(r.llm_made for r in reports),
        llm_calls_cached=sum(r.llm_cached for r in reports),
        tokens_in=sum(r.tokens_in for r in reports),
        tokens_out=sum(r.tokens_out for r in reports),
        embeddings_made=sum(r.embeddings_made for r in reports),
        embeddings_cached=sum(r.embeddings_cached for r in reports),
        rows_added=rows_added,
        stage_seconds={r.stage: r.seconds for r in reports},
        message=message,
    )
    with open_warehouse(settings) as wh:
        wh.upsert("runs", [record], ("run_id",), update=True)
    return {
        **record,
        "stages": [r.__dict__ for r in reports],
        "db_path": str(settings.db_path),
        "published_path": str(settings.published_path),
    }
