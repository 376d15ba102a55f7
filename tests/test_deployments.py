"""The deployment definitions load and each entrypoint names a real flow."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime, timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
import yaml
from llm_server import serve_in_background
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


def test_schedules_are_deployed_paused_and_the_readme_lists_every_deployment():
    """`prefect deploy --all` turns on no schedule (a night with nothing configured would only
    fail); the README names each deployment as `prefect deployment run` takes it, and says
    how each schedule is turned on."""
    readme = (ROOT / "README.md").read_text()
    for d in _deployments():
        assert all(s["active"] is False for s in d.get("schedules", [])), d["name"]
        assert f"`{FLOWS[d['name']]}/{d['name']}`" in readme, d["name"]
    assert "prefect deployment schedule" in readme and "resume" in readme


def test_workers_get_the_environment_a_terminal_run_sets():
    """lilo's stage lines reach the flow run logs and the embedder never calls a hub, on a
    worker as in `lilo` (flows/cli/_main.py sets the same for terminal runs)."""
    for d in _deployments():
        env = d["work_pool"]["job_variables"]["env"]
        assert env["PREFECT_LOGGING_EXTRA_LOGGERS"] == "lilo" and env["HF_HUB_OFFLINE"] == "1"
        assert env["PREFECT_LOGGING_TO_API_WHEN_MISSING_FLOW"] == "ignore"
        assert d["work_pool"]["name"] == "lilo-process"


class _Listener(ThreadingHTTPServer):
    """A loopback server that records every request's Authorization header (an attacker's
    endpoint); it answers 404."""

    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), _Recorder)
        self.seen: list[str | None] = []
        self.url = f"http://127.0.0.1:{self.server_address[1]}/v1"

    def __enter__(self) -> _Listener:
        serve_in_background(self)
        return self

    def __exit__(self, *exc: object) -> None:
        self.shutdown()
        self.server_close()


class _Recorder(BaseHTTPRequestHandler):
    server: _Listener

    def log_message(self, *args: object) -> None:
        pass

    def _answer(self) -> None:
        self.server.seen.append(self.headers.get("Authorization"))
        self.send_error(404)

    do_GET = do_POST = do_HEAD = _answer  # noqa: N815 (http.server's naming)


def test_a_run_s_parameters_never_choose_endpoints_keys_or_folders(
    tmp_path, monkeypatch, prefect_harness
):
    """What a Prefect API user could ask of a worker: its key sent to their endpoint, its
    sweep run in their folder. Each deployment's flow fails at once, naming the settings,
    and nothing is sent or written."""
    from prefect import get_client
    from prefect.client.schemas.filters import FlowRunFilter, FlowRunFilterName

    from lilo.flows.pipeline import lilo_pipeline, lilo_run_dataset
    from lilo.flows.probe import lilo_probes
    from lilo.flows.qa_review import qa_review
    from lilo.tasks.config_loading import ParameterRefused

    monkeypatch.setenv("LILO_DATA_DIR", str(tmp_path / "worker"))  # the worker's own
    monkeypatch.setenv("LILO_LLM__API_KEY", "sk-worker-secret")
    victim = tmp_path / "victim"
    refused = (
        "a run's parameters may not set llm.base_url, data_dir: folders, endpoints and keys "
        "come from the worker's own configuration (its LILO_CONFIG file or LILO_* variables); "
        "set them there"
    )
    with _Listener() as attacker:
        attack = {"llm.backend": "openai", "llm.base_url": attacker.url, "data_dir": str(victim)}
        runs = {
            "run-dataset": lambda name: lilo_run_dataset.with_options(flow_run_name=name)(
                "v1", overrides=attack
            ),
            "pipeline": lambda name: lilo_pipeline.with_options(flow_run_name=name)(
                surveys=["2301.00001"], overrides=attack
            ),
            "review": lambda name: qa_review.with_options(flow_run_name=name)(overrides=attack),
            "probes": lambda name: lilo_probes.with_options(flow_run_name=name)(
                backbones=[{"llm.model": "m"}, attack]
            ),
        }
        for kind, run in runs.items():
            name = f"{kind}-{tmp_path.name}"
            with pytest.raises(Exception) as failed:
                run(name)
            assert attacker.seen == [], kind  # the worker's key went nowhere
            assert not victim.exists() and not (tmp_path / "worker").exists(), kind
            assert isinstance(failed.value, ParameterRefused) and str(failed.value) == refused
            with get_client(sync_client=True) as client:
                (flow_run,) = client.read_flow_runs(
                    flow_run_filter=FlowRunFilter(name=FlowRunFilterName(any_=[name]))
                )
            assert flow_run.state.type.value == "FAILED" and refused in flow_run.state.message
