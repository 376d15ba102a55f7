"""The progress line's time left (flows/_progress.py `TimeLeft`), on a fake clock: a generate
unit is a whole summary of many calls, so a stage once sat at "12/24 units" while its "about
30 s left" grew to 90 s. Paced by the calls, the estimate counts down while calls complete
at a steady rate, and says it cannot estimate rather than growing. On a slow loopback
endpoint, the line counts a unit's calls as they end and the one in flight, before the
unit finishes."""

from __future__ import annotations

import re
import threading
import time

from llm_server import LLMServer

from lilo.flows._progress import StageProgress, TimeLeft
from lilo.flows._stage import StageReport
from lilo.tasks.llm import make_client


class Clock:
    """A clock the test moves."""

    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_the_time_left_counts_down_while_calls_complete_at_a_steady_rate():
    """24 units of 10 calls each, 4 at a time, a call a second: the units finish in fours
    every 40 s. Sampled every second, the time left never grows, and it ends near the truth."""
    clock = Clock()
    left = TimeLeft(24, clock)
    shown = []
    for second in range(1, 240):
        clock.now += 1
        if second % 40 == 0:
            left.finished(second // 10, second)
        shown.append(left.seconds(second))
    assert shown[:39] == [None] * 39  # no unit finished: it cannot tell yet
    told = shown[39:]
    assert all(s is not None for s in told)
    assert all(later <= earlier for earlier, later in zip(told, told[1:], strict=False))
    assert abs(told[0] - 200) < 10  # 200 s were left at 40 s
    assert told[-1] < 10


def test_the_time_left_is_not_told_once_the_calls_expected_are_made():
    """Units that take more calls than the finished ones did: once the calls expected are
    made, the line says it is estimating, not a time that would have to grow."""
    clock = Clock()
    left = TimeLeft(4, clock)
    clock.now += 10
    left.finished(1, 9)  # 10 work a unit, 40 in all
    assert round(left.seconds(9)) == 30
    clock.now += 20
    assert left.seconds(39) is None  # 40 of the 40 expected: overdue
    left.finished(2, 40)  # a slower unit: the estimate is made again
    assert left.seconds(40) is not None


def test_units_without_calls_are_paced_by_the_units():
    """A stage whose units make no LLM call (all replies in the warehouse) is paced by its
    units: 2 every 10 s."""
    clock = Clock()
    left = TimeLeft(10, clock)
    clock.now += 10
    left.finished(2, 0)
    assert round(left.seconds(0)) == 40
    clock.now += 10
    left.finished(6, 0)
    assert round(left.seconds(0)) == 13
    left.finished(10, 0)
    assert left.seconds(0) is None  # all done


def test_the_time_left_waits_for_its_first_seconds():
    """A unit finished at once (a cached one) tells nothing yet: the line says it is
    estimating until `min_s` seconds have passed."""
    clock = Clock()
    left = TimeLeft(10, clock, min_s=10)
    clock.now += 1
    left.finished(1, 0)
    assert left.seconds(0) is None
    clock.now += 9
    assert round(left.seconds(0)) == 90


def test_the_time_left_never_grows_while_no_unit_finishes():
    """A cold generate stage sat at 18/36 units with no call counted while its "about 12 s
    left" grew to 30 s. Between two finishes the time left counts down from the last one
    told, then says it is estimating; the next finish makes it again."""
    clock = Clock()
    left = TimeLeft(4, clock)
    clock.now += 10
    left.finished(1, 9)  # 10 work a unit, 40 in all: 30 s left
    assert round(left.seconds(9)) == 30
    shown = []
    for _ in range(40):  # a long call: no call ends for 40 s
        clock.now += 1
        shown.append(left.seconds(9))
    told = [s for s in shown if s is not None]
    assert all(later < earlier for earlier, later in zip(told, told[1:], strict=False))
    assert shown[-1] is None  # counted down with the units still to finish: estimating
    left.finished(2, 19)
    assert left.seconds(19) is not None


def test_the_line_counts_a_units_calls_and_the_one_in_flight_before_the_unit_ends(tmp_path):
    """One unit of 5 unstreamed calls, 0.4 s each: while it runs (0/1 units) the line shows a
    call in flight and the calls ended grow, where the stage report (read from the call log
    as units finish) still counts none; the time left is not told."""
    with LLMServer() as server:
        server.compute_s = 0.4
        llm = make_client(server.settings(tmp_path).with_overrides({"llm": {"stream": False}}))

        def unit() -> None:
            for n in range(5):
                llm.complete([{"role": "user", "content": f"part {n}"}], purpose="t")

        with StageProgress(StageReport("generate", "r1"), 1) as progress:
            runs = threading.Thread(target=unit)
            runs.start()
            lines = []
            while runs.is_alive():
                lines.append(progress._line())
                time.sleep(0.1)
            runs.join()
            last = progress._line()
    assert all(line.startswith("0/1 units") for line in lines), lines
    assert any(", 1 in flight)" in line for line in lines), lines
    calls = [int(re.search(r"(\d+) LLM calls", line).group(1)) for line in lines]
    assert calls == sorted(calls) and len(set(calls)) >= 4, lines  # 0, 1, 2, 3, 4 ended
    assert last.startswith("0/1 units, 5 LLM calls (0 cached)"), last
    assert all("estimating the time left" in line for line in lines), lines


def test_the_line_shows_texts_being_embedded_between_a_units_calls(tmp_path):
    """A retrieving method's unit embeds for long between its calls (the demo's generate sat
    at 18/36 units, no call moving, for 20 s): the line says texts are being embedded,
    then how many were, here from a slow loopback embedding endpoint."""
    from llm_server import bag_of_words

    from lilo.tasks.embeddings import Embedder

    with LLMServer() as server:
        server.embed = lambda text: (time.sleep(0.5), bag_of_words(text))[1]
        endpoint = {"backend": "openai", "base_url": server.base_url, "model": "bag"}
        endpoint["api_key"] = "sk-test"
        settings = server.settings(tmp_path, embedding=endpoint)
        embedder = Embedder(settings.embedding, settings.data_dir)
        with StageProgress(StageReport("generate", "r1"), 1) as progress:
            runs = threading.Thread(target=embedder.embed, args=(["one text", "another"],))
            runs.start()
            lines = []
            while runs.is_alive():
                lines.append(progress._line())
                time.sleep(0.1)
            runs.join()
            last = progress._line()
    assert any(", 0 texts embedded (2 under way)" in line for line in lines), lines
    assert ", 2 texts embedded, 0 errors" in last, last
