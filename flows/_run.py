"""A run's record in the `runs` table: written when the run starts, completed (or marked
failed, with why) when it ends, with what its stages reported (DESIGN §10)."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from typing import Any

from prefect.runtime import flow_run

from flows._stage import StageReport, log, open_warehouse
from tasks.config import Settings
from tasks.llm import make_client
from tasks.provenance import code_version

__all__ = ["RunRecord", "recorded_run"]


def _now() -> datetime:
    return datetime.now(UTC).replace(tzinfo=None)


class RunRecord:
    """One run: its id, its stages' reports, and the `runs` row summing them."""

    def __init__(self, settings: Settings, flow_name: str) -> None:
        self.settings = settings
        self.run_id = flow_run.get_id() or str(uuid.uuid4())
        self.reports: list[StageReport] = []
        self.row: dict[str, Any] = {
            "run_id": self.run_id,
            "flow": flow_name,
            "started_at": _now(),
            "status": "running",
            "config_hash": settings.config_hash(),
            "code_version": code_version(),
            "backbone": make_client(settings).backbone,
            "dataset_version": settings.dataset_version,
            "review_mode": settings.qa.review,
            "target_words": list(settings.generate.target_words),
            "settings": settings.model_dump(mode="json"),
        }

    def add(self, report: StageReport) -> StageReport:
        self.reports.append(report)
        log.info(
            "%s done in %.1f s: %d LLM calls made, %d from cache, %d rows added",
            report.stage,
            report.seconds,
            report.llm_made,
            report.llm_cached,
            sum(report.rows_added.values()),
        )
        return report

    def save(self, status: str, message: str = "") -> None:
        reports = self.reports
        rows_added: dict[str, int] = {}
        seconds: dict[str, float] = {}
        for r in reports:
            seconds[r.stage] = round(seconds.get(r.stage, 0.0) + r.seconds, 3)
            for table, n in r.rows_added.items():
                rows_added[table] = rows_added.get(table, 0) + n
        if status != "running":
            self.row["finished_at"] = _now()
        self.row.update(
            status=status,
            llm_calls_made=sum(r.llm_made for r in reports),
            llm_calls_cached=sum(r.llm_cached for r in reports),
            tokens_in=sum(r.tokens_in for r in reports),
            tokens_out=sum(r.tokens_out for r in reports),
            embeddings_made=sum(r.embeddings_made for r in reports),
            embeddings_cached=sum(r.embeddings_cached for r in reports),
            rows_added=rows_added,
            stage_seconds=seconds,
            message=message,
        )
        with open_warehouse(self.settings) as wh:
            wh.upsert("runs", [self.row], ("run_id",), update=True)

    def summary(self) -> dict[str, Any]:
        """The run row with its stages and where the results are, for the caller to show."""
        return {
            **self.row,
            "stages": [r.__dict__ for r in self.reports],
            "db_path": str(self.settings.db_path),
            "published_path": str(self.settings.published_path),
        }


@contextmanager
def recorded_run(settings: Settings, flow_name: str) -> Iterator[RunRecord]:
    """The run row is written first (status `running`), then completed or marked failed
    with the exception, which is re-raised."""
    run = RunRecord(settings, flow_name)
    run.save("running")
    try:
        yield run
    except BaseException as exc:
        run.save("failed", f"{type(exc).__name__}: {exc}")
        raise
    run.save("completed")
