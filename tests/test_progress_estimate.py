"""The progress line's time left (flows/_progress.py `TimeLeft`), on a fake clock: a generate
unit is a whole summary of many calls, so a stage once sat at "12/24 units" while its "about
30 s left" grew to 90 s. Paced by the calls, the estimate counts down while calls complete
at a steady rate, and says it cannot estimate rather than growing."""

from __future__ import annotations

from lilo.flows._progress import TimeLeft


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
    units: 2 a second."""
    clock = Clock()
    left = TimeLeft(10, clock)
    clock.now += 2
    left.finished(2, 0)
    assert round(left.seconds(0)) == 8
    clock.now += 2
    left.finished(6, 0)
    assert round(left.seconds(0)) == 3
    left.finished(10, 0)
    assert left.seconds(0) is None  # all done
