"""`lilo run --dry-run` (flows/dry_run.py): the run planned without calling a model (a
loopback endpoint gets no request at all), its calls by stage and method, the cache's
share counted by key (all of it once a real run made them), and the cost range at the
prices, "cost unknown" for a model without one."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest
from llm_server import LLMServer, seed_dataset

from lilo.flows.cli import main
from lilo.flows.dry_run import plan_run
from lilo.tasks.config import Settings

ARGS = ["--methods", "single,agentwrite", "--target-words", "400"]
ARGS += ["--set", "qa.quota_single=2", "--set", "qa.quota_cross=0"]
OPENAI = ["--set", "llm.backend=openai", "--set", "llm.model=scripted"]
OPENAI += ["--set", "llm.api_key=sk-test", "--set", "llm.retries=0"]


def _dry(data: Path, *more: str) -> int:
    return main(["run", "--dataset", "v1", "--data-dir", str(data), *ARGS, *more, "--dry-run"])


def _total(out: str) -> tuple[int, int, int]:
    """(calls, cached, to send) of the printout's total line."""
    line = next(x for x in out.splitlines() if x.strip().startswith("all"))
    found = re.search(r"(\d+) calls, (\d+) cached \(free\), (\d+) to send", line)
    assert found, line
    return int(found[1]), int(found[2]), int(found[3])


def test_a_dry_run_on_an_endpoint_sends_it_nothing_and_prices_its_calls(tmp_path, capsys):
    data = tmp_path / "data"
    with LLMServer() as server:
        seed_dataset(server.settings(data), 1)
        url = ["--set", f"llm.base_url={server.base_url}"]
        price = ["--set", "llm.prices.scripted.input=2.0", "--set", "llm.prices.scripted.output=8"]
        assert _dry(data, *OPENAI, *url, *price) == 0
        priced = capsys.readouterr().out
        assert _dry(data, *OPENAI, *url) == 0
        unpriced = capsys.readouterr().out
        assert server.requests == [] and server.asked == []  # not one request of any kind
        settings = server.settings(data).with_overrides(
            {
                "dataset_version": "v1",
                "generate": {"methods": ["single", "agentwrite"], "target_words": [400]},
                "qa": {"quota_single": 2, "quota_cross": 0},
                "llm": {"prices": {"scripted": {"input": 2.0, "output": 8.0}}},
            }
        )
        total = plan_run(settings).total()
    for stage in ("generate single", "generate agentwrite", "score    single"):
        assert re.search(stage.replace(" ", r"\s+"), priced), priced
    calls, cached, send = _total(priced)
    # Nothing is cached but what the run asks twice (its own repeats).
    assert calls == total.calls > 3 and cached == total.cached and send == calls - cached > 3
    # The range: the prompts' tokens at the input price, up to every budget at the output's.
    low = total.tokens_in * 2.0 / 1e6
    assert total.cost_low == pytest.approx(low)
    assert total.cost_high == pytest.approx(low + total.max_out * 8.0 / 1e6)
    assert f"cost {low:.4g} to {total.cost_high:.4g}" in priced
    assert "estimated" in priced  # AgentWrite's steps read what the model would write
    assert "cost unknown (no price for scripted)" in unpriced and "cost 0" not in unpriced


def test_the_cache_s_share_becomes_all_once_a_real_run_made_the_calls(
    tmp_path, capsys, prefect_harness, loopback_embeddings
):
    first, again = tmp_path / "first", tmp_path / "again"
    for data in (first, again):
        seed_dataset(Settings(data_dir=data), 1)
    assert _dry(first) == 0
    out = capsys.readouterr().out
    planned = _total(out)
    assert planned[2] > 0 and "cost 0" in out  # lilo's engine is free
    assert main(["run", "--dataset", "v1", "--data-dir", str(first), *ARGS]) in (0, 1)
    ran = capsys.readouterr().out
    # The real run's summary sets its calls beside the plan: on the offline engine, the same.
    said = r"planned by --dry-run: (\d+) calls to send.*this run: (\d+) calls made \((\d+) from"
    beside = re.search(said, ran)
    assert beside, ran
    # Its own repeats (a prompt asked twice) are the cache's in the plan as in the run.
    assert (int(beside[1]), int(beside[2]), int(beside[3])) == (planned[2], planned[2], planned[1])
    # Rerun: nothing left to make.
    assert _dry(first) == 0
    out = capsys.readouterr().out
    assert "0 generations to make" in out and _total(out)[2] == 0
    # A warehouse without the results but with the cache: every call is the cache's, free.
    shutil.copytree(first / "cache", again / "cache")
    assert _dry(again) == 0
    out = capsys.readouterr().out
    calls, cached, send = _total(out)
    assert calls == cached == planned[0] and send == 0
    assert "cost 0" in out


def test_a_probe_dry_run_plans_its_answers_and_asks_nothing(tmp_path, capsys, prefect_harness):
    """`lilo probe kv --dry-run`: one planned call per answer, none sent (the endpoint sees
    no request); after the real probe every planned call is the cache's."""
    data = tmp_path / "data"
    probe = ["probe", "kv", "--keys", "10", "--positions", "0,9", "--examples", "2"]
    with LLMServer() as server:
        url = ["--set", f"llm.base_url={server.base_url}", *OPENAI]
        assert main([*probe, "--data-dir", str(data), *url, "--dry-run"]) == 0
        out = capsys.readouterr().out
        assert server.requests == [] and server.asked == []
        assert "dry run: 4 answers to ask; no call is sent" in out, out
        assert re.search(r"probe\s+kv \S+\s+4 calls, 0 cached", out), out
        assert _total(out) == (4, 0, 4)
        assert main([*probe, "--data-dir", str(data), *url]) == 0
        made = len(server.asked)
        capsys.readouterr()
        assert main([*probe, "--data-dir", str(data), *url, "--dry-run"]) == 0
        assert _total(capsys.readouterr().out) == (4, 4, 0) and made == 4
