"""A stage's progress, as it goes: a bar in the terminal (rich), else a line in the log at a
steady interval (a pipe, a log file, a deployment's run), and a Prefect progress artifact,
each with units done / total, LLM calls, tokens, errors and the time left. The counts are
the stage report's, which counts each call as its stage writer reads it from the call log
(flows/_stage_writer.py), and this process's requests in flight with the tokens they have
streamed so far (tasks/llm/live.py), so the line moves during a long request. The line is
made when it is shown. A unit may be many calls (a whole summary), so the time left is
paced by the calls, not the units (`TimeLeft`): it counts down while calls complete at a
steady rate; before the first unit, and once the calls expected are made, it says
"estimating"."""

from __future__ import annotations

import contextvars
import sys
import threading
import time
from collections.abc import Callable
from types import TracebackType
from uuid import UUID

from rich.progress import ProgressColumn, Task
from rich.text import Text

from lilo.flows._artifacts import progress_artifact, update_progress
from lilo.flows._bar import bar
from lilo.flows._stage import StageReport, log
from lilo.tasks.llm.live import LIVE

__all__ = ["StageProgress", "TimeLeft"]


class TimeLeft:
    """Seconds left of `total` units at the pace of their work: a unit's work is the calls
    it makes plus one; the work of all units is the work per unit finished (as of the last
    finish) times `total`, done at the stage's pace so far. None when it cannot be told yet:
    before the first unit, or once the work expected is done with units still to finish."""

    def __init__(self, total: int, clock: Callable[[], float] = time.monotonic) -> None:
        self.total, self._clock = total, clock
        self._started = clock()
        self._done = 0
        self._per_unit = 0.0

    def finished(self, done: int, calls: int) -> None:
        """`done` units finished, `calls` LLM calls completed (made or cached) so far."""
        self._done = done
        if done:
            self._per_unit = (calls + done) / done

    def seconds(self, calls: int) -> float | None:
        """The time left with `calls` LLM calls completed so far."""
        if not self._done or self._done >= self.total:
            return None
        work = calls + self._done
        left = (self._per_unit * self.total - work) * (self._clock() - self._started) / work
        return left if left >= 1 else None


class StageProgress:
    """Call `advance` as units finish; the artifact is updated at most every `every_s`.
    Without a terminal, a line `stage: <progress>` is logged every `line_every_s`, units
    finished or not, until the stage ends."""

    def __init__(
        self, report: StageReport, total: int, every_s: float = 2.0, line_every_s: float = 30.0
    ) -> None:
        self.report, self.total, self.every_s = report, total, every_s
        self.done = self.errors = 0
        self._last = time.monotonic()
        self._time_left = TimeLeft(total)
        self._tty = sys.stderr.isatty()
        self._line_every_s = line_every_s
        self._ended = threading.Event()
        self._bar = bar(report.stage, _Line(self))
        self._task = self._bar.add_task(report.stage, total=total)
        self._artifact: UUID | None = progress_artifact(f"{report.stage}-progress", self._line())

    def __enter__(self) -> StageProgress:
        self._bar.start()
        if not self._tty and self.total:
            # In the stage's context: its lines reach the flow run's logs, as the stage's do.
            ticker = contextvars.copy_context().run
            threading.Thread(
                target=ticker, args=(self._tick,), name=f"{self.report.stage}-progress", daemon=True
            ).start()
        return self

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self._ended.set()
        self._bar.stop()
        self._update(force=True)

    def _tick(self) -> None:
        while not self._ended.wait(self._line_every_s):
            log.info("%s: %s", self.report.stage, self._line())

    def _line(self) -> str:
        r = self.report
        calls = r.llm_made + r.llm_cached
        flight = f", {LIVE.in_flight} in flight" if LIVE.in_flight else ""
        return (
            f"{self.done}/{self.total} units, {calls} LLM calls ({r.llm_cached} cached"
            f"{flight}), {r.tokens_in + r.tokens_out + LIVE.tokens} tokens, "
            f"{self.errors} errors{self._left()}"
        )

    def _left(self) -> str:
        if self.done >= self.total:
            return ""
        left = self._time_left.seconds(self.report.llm_made + self.report.llm_cached)
        return ", estimating the time left" if left is None else f", about {left:.0f} s left"

    def advance(self, n: int, errors: int = 0) -> None:
        self.done += n
        self.errors += errors
        if n:
            self._time_left.finished(self.done, self.report.llm_made + self.report.llm_cached)
        self._bar.update(self._task, advance=n)
        self._update()

    def _update(self, force: bool = False) -> None:
        now = time.monotonic()
        if self._artifact is None or (not force and now - self._last < self.every_s):
            return
        self._last = now
        share = 100.0 * self.done / self.total if self.total else 100.0
        update_progress(self._artifact, share, self._line())


class _Line(ProgressColumn):
    """The stage's counts and time left, made each time the bar is drawn."""

    def __init__(self, progress: StageProgress) -> None:
        super().__init__()
        self._progress = progress

    def render(self, task: Task) -> Text:
        return Text(self._progress._line())
