"""A probe reply that echoes its prompt (tasks/probes/metric.py, docs/design.md §17): the rule
on constructed replies, then a KV probe against a loopback endpoint that echoes the prompt
for some keys and answers the others, and the curve's echo columns beside the authors'
accuracy."""

from __future__ import annotations

from pathlib import Path

import pytest

from lilo.tasks.probe_records import ProbeUnit
from lilo.tasks.probes import (
    ECHO_TOKENS,
    LILO_PROMPTS,
    ProbePrompts,
    build_prompt,
    echoes_prompt,
    kv_correct,
    kv_items,
)
from lilo.warehouse import Warehouse

PROMPTS = ProbePrompts("lilo", LILO_PROMPTS)
ITEM = kv_items(10, 1, seed=0)[0]
PROMPT = build_prompt(ProbeUnit(ITEM, "v", "position", 0, False), PROMPTS)
VALUE = ITEM.answers[0]


def _echo(prompt: str, words: int = 23) -> str:
    """What a base model wrote: the prompt again, up to just past the first pair."""
    return " ".join(prompt.split()[:words])


def test_a_reply_copying_the_prompt_is_an_echo_and_holds_the_first_value():
    reply = _echo(PROMPT)
    assert reply.startswith("The JSON object below maps keys to values.")
    assert echoes_prompt(reply, PROMPT) is True
    assert kv_correct(reply, VALUE)  # the gold pair is first: Liu et al.'s rule counts it


def test_an_echo_is_found_whatever_the_whitespace():
    assert echoes_prompt("\n  " + _echo(PROMPT).replace(" ", "\n\t"), PROMPT) is True


def test_correct_answers_are_not_echoes():
    assert echoes_prompt(VALUE, PROMPT) is False
    assert echoes_prompt(f'"{ITEM.question}": "{VALUE}"', PROMPT) is False
    preamble = f"The value that belongs to this key is {VALUE}."
    assert kv_correct(preamble, VALUE) and echoes_prompt(preamble, PROMPT) is False


def test_a_reply_copying_fewer_tokens_than_the_rule_is_not_an_echo():
    assert echoes_prompt(_echo(PROMPT, ECHO_TOKENS - 1), PROMPT) is False
    assert echoes_prompt(_echo(PROMPT, ECHO_TOKENS), PROMPT) is True
    # Eight tokens of the prompt, but not opening the reply: not an echo.
    assert echoes_prompt("Sure. " + _echo(PROMPT), PROMPT) is False


def test_an_empty_reply_has_no_echo_verdict():
    assert echoes_prompt("", PROMPT) is None
    assert echoes_prompt(" \n ", PROMPT) is None


def _echoes(key: str) -> bool:
    """The scripted endpoint echoes the prompts asking for keys that start with 0-3."""
    return key[0] in "0123"


def _respond(prompt: str, n: int) -> str:
    key = prompt.rsplit('Key: "', 1)[1].split('"')[0]
    if _echoes(key):
        return _echo(prompt)
    return next(line for line in prompt.splitlines() if line.lstrip("{ ").startswith(f'"{key}"'))


def test_the_curve_shows_the_echo_rate_and_the_accuracy_of_the_replies_that_do_not_echo(
    tmp_path: Path, prefect_harness, capsys
):
    from llm_server import LLMServer

    from lilo.flows.cli.probe import _print_probe
    from lilo.flows.probe import probe_flow

    items = kv_items(10, 12, seed=0)
    echoing = sum(_echoes(i.question) for i in items)
    assert 0 < echoing < len(items) / 2  # the seed's items: a mix, most of them answered
    data = tmp_path / "data"
    with LLMServer() as server:
        server.respond = _respond
        settings = server.settings(data, probe={"kv_keys": [10], "positions": [0, 5, 9]})
        result = probe_flow("kv", settings.with_overrides({"probe.examples": len(items)}))
    assert result.failed == 0
    curve = {r["position"]: r for r in result.curve}
    n, answered = len(items), len(items) - echoing
    for position, row in curve.items():
        assert row["n"] == n and row["echo_rate"] == round(echoing / n, 4)
        # The answered replies are all right, the echoes right only with the gold pair first.
        correct = n if position == 0 else answered
        assert row["accuracy"] == round(correct / n, 4)
        assert row["non_echo_n"] == answered and row["non_echo_accuracy"] == 1.0
        assert row["non_echo_ci_low"] < 1.0 == row["non_echo_ci_high"]
        assert row["echo_carried"] is False  # most correct replies answered
    with Warehouse(data / "lilo.duckdb") as wh:
        echo = wh.con.execute(
            "SELECT echo, count(*) FROM fct_probe_answers GROUP BY echo ORDER BY echo"
        ).fetchall()
    assert echo == [(False, 3 * answered), (True, 3 * echoing)]
    _print_probe(result)
    out = capsys.readouterr().out
    assert "echo" in out and "non-echo" in out and f"{echoing / n:.2f}" in out


def test_a_position_whose_correct_replies_are_echoes_is_marked(tmp_path: Path, prefect_harness):
    """The endpoint echoes every prompt: position 0 scores 1.0 by the authors' rule, all of
    it echoes; the view marks it, and the report lists it."""
    from llm_server import LLMServer

    from lilo.flows.probe import probe_flow

    data = tmp_path / "data"
    with LLMServer() as server:
        server.respond = lambda prompt, n: _echo(prompt)
        settings = server.settings(data, probe={"kv_keys": [10], "positions": [0, 9]})
        result = probe_flow("kv", settings.with_overrides({"probe.examples": 4}))
    curve = {r["position"]: r for r in result.curve}
    first, last = curve[0], curve[9]
    assert (first["accuracy"], first["echo_rate"], first["echo_carried"]) == (1.0, 1.0, True)
    assert (first["non_echo_n"], first["non_echo_accuracy"]) == (0, None)
    assert (last["accuracy"], last["echo_rate"], last["echo_carried"]) == (0.0, 1.0, False)
    page = Path(result.report_path).read_text()
    assert "Accuracy carried by echoes" in page
    line = "key-value retrieval, 10 keys, lilo[seed=0], prompts lilo, openai:scripted: position 0"
    assert line in page


@pytest.mark.parametrize("reply", ["", "   "])
def test_an_empty_reply_is_a_failed_call_without_an_echo_verdict(
    tmp_path: Path, prefect_harness, reply
):
    from llm_server import LLMServer

    from lilo.flows.probe import probe_flow

    data = tmp_path / "data"
    with LLMServer() as server:
        server.respond = lambda prompt, n: reply
        settings = server.settings(data, probe={"kv_keys": [10], "positions": [0]})
        result = probe_flow("kv", settings.with_overrides({"probe.examples": 2}))
    (row,) = result.curve
    assert (row["n"], row["failed"], row["echo_rate"], row["echo_carried"]) == (0, 2, None, None)
    with Warehouse(data / "lilo.duckdb") as wh:
        found = wh.con.execute("SELECT DISTINCT correct, echo FROM fct_probe_answers").fetchall()
    assert found == [(None, None)]
