"""The deployment definitions load and each entrypoint names a real flow."""

from __future__ import annotations

from pathlib import Path

import yaml
from prefect import Flow
from prefect.client.schemas.schedules import CronSchedule
from prefect.flows import load_flow_from_entrypoint

ROOT = Path(__file__).resolve().parent.parent
FLOWS = {
    "nightly": "lilo-pipeline",
    "on-demand": "lilo-pipeline",
    "qa-review": "qa-review",
    "probes-nightly": "lilo-probes",
}


def _deployments() -> list[dict]:
    return yaml.safe_load((ROOT / "deployments" / "prefect.yaml").read_text())["deployments"]


def test_every_entrypoint_is_a_flow(monkeypatch):
    monkeypatch.chdir(ROOT)  # entrypoints are relative to the repository root
    for deployment in _deployments():
        flow = load_flow_from_entrypoint(deployment["entrypoint"])
        assert isinstance(flow, Flow)
        assert flow.name == FLOWS[deployment["name"]]
        assert set(deployment.get("parameters") or {}) <= set(flow.parameters.properties)


def test_nightly_has_a_valid_cron_and_on_demand_has_none():
    by_name = {d["name"]: d for d in _deployments()}
    assert set(by_name) == set(FLOWS)
    for nightly in ("nightly", "probes-nightly"):
        (schedule,) = by_name[nightly]["schedules"]
        CronSchedule(cron=schedule["cron"], timezone=schedule["timezone"])
    assert not by_name["on-demand"].get("schedules")
    assert not by_name["qa-review"].get("schedules")
    for d in by_name.values():
        assert d["work_pool"]["name"] == "lilo-process"
