"""The deployment definitions load and each entrypoint names a real flow."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime, timedelta
from pathlib import Path

import yaml
from prefect import Flow
from prefect.flows import load_flow_from_entrypoint
from prefect.server.schemas.schedules import CronSchedule as ServerCronSchedule

ROOT = Path(__file__).resolve().parent.parent
FLOWS = {
    "nightly": "lilo-pipeline",
    "on-demand": "lilo-pipeline",
    "qa-review": "qa-review",
    "probes-nightly": "lilo-probes",
}


def _deployments() -> list[dict]:
    return yaml.safe_load((ROOT / "deployments" / "prefect.yaml").read_text())["deployments"]


def test_every_entrypoint_is_a_flow_that_accepts_its_parameters(monkeypatch):
    monkeypatch.chdir(ROOT)  # entrypoints are relative to the repository root
    for deployment in _deployments():
        flow = load_flow_from_entrypoint(deployment["entrypoint"])
        assert isinstance(flow, Flow)
        assert flow.name == FLOWS[deployment["name"]]
        # the values themselves validate against the flow's signature, as a run's would
        flow.validate_parameters(deployment.get("parameters") or {})


def _fire_times(deployment: dict, n: int) -> list[datetime]:
    """The next `n` runs from 2026-01-01 as Prefect's scheduler computes them."""
    (schedule,) = deployment["schedules"]
    cron = ServerCronSchedule(cron=schedule["cron"], timezone=schedule["timezone"])
    start = datetime(2026, 1, 1, tzinfo=UTC)
    return [d.astimezone(UTC) for d in asyncio.run(cron.get_dates(n=n, start=start))]


def test_only_the_nightly_ones_are_scheduled_daily_and_the_probes_follow_the_pipeline():
    by_name = {d["name"]: d for d in _deployments()}
    assert set(by_name) == set(FLOWS)
    assert {name for name, d in by_name.items() if d.get("schedules")} == {
        "nightly",
        "probes-nightly",
    }
    pipeline, probes = _fire_times(by_name["nightly"], 3), _fire_times(by_name["probes-nightly"], 3)
    assert all(b - a == timedelta(days=1) for a, b in zip(pipeline, pipeline[1:], strict=False))
    # the probes run after the pipeline, so probe_vs_summary sees the same night's summaries
    assert all(
        timedelta(0) < p - q < timedelta(hours=12) for p, q in zip(probes, pipeline, strict=True)
    )


def test_workers_get_the_environment_a_terminal_run_sets():
    """lilo's stage lines reach the flow run logs and the embedder never calls a hub, on a
    worker as in `lilo` (flows/cli/_main.py sets the same for terminal runs)."""
    for d in _deployments():
        env = d["work_pool"]["job_variables"]["env"]
        assert env["PREFECT_LOGGING_EXTRA_LOGGERS"] == "lilo" and env["HF_HUB_OFFLINE"] == "1"
        assert d["work_pool"]["name"] == "lilo-process"
