"""A stage's progress, as it goes: a bar in the terminal (rich), else a line in the log at a
steady interval (a pipe, a log file, a deployment's run), and a Prefect progress artifact,
each with units done / total, LLM calls, tokens, errors and the time left. The calls are
counted as this process's LLM client starts and ends them (tasks/live.py: ended, in
flight, the tokens streamed so far), so the line moves inside a unit of many calls and
during a long request, as do the texts embedded and being embedded (a retrieving method's
unit embeds for long between its calls); the stage report's counts, read from the call log
as units finish (flows/_stage_writer.py), stand where they are higher (units on Dask). The
line is made when it is shown. A unit may be many calls (a whole summary), so the time left
is paced by the calls, not the units (`TimeLeft`): it counts down while calls complete, and
never grows between two units finished; before the first unit and its first seconds, and
once it has counted down with units still to finish, it says "estimating"."""

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
from lilo.tasks.live import LIVE

__all__ = ["StageProgress", "TimeLeft"]


class TimeLeft:
    """Seconds left of `total` units at the pace of their work: a unit's work is the calls
    it makes plus one; the work of all units is the work per unit finished (as of the last
    finish) times `total`, done at the stage's pace so far. Between two finishes it never
    grows: it counts down from the last time told. None when it cannot be told yet: before
    the first unit or `min_s` seconds, and once it has counted down with units to finish."""

    def __init__(
        self, total: int, clock: Callable[[], float] = time.monotonic, min_s: float = 10.0
    ) -> None:
        self.total, self._clock, self.min_s = total, clock, min_s
        self._started = clock()
        self._done = 0
        self._per_unit = 0.0
        self._told: tuple[float, float] | None = None  # (when, seconds) since the last finish

    def finished(self, done: int, calls: int) -> None:
        """`done` units finished, `calls` LLM calls completed (made or cached) so far."""
        self._done = done
        self._told = None  # a finish is news: the estimate is made again
        if done:
            self._per_unit = (calls + done) / done

    def seconds(self, calls: int) -> float | None:
        """The time left with `calls` LLM calls completed so far."""
        now = self._clock()
        elapsed = now - self._started
        if not self._done or self._done >= self.total or elapsed < self.min_s:
            return None
        work = calls + self._done
        left = (self._per_unit * self.total - work) * elapsed / work
        if self._told is not None:
            when, told = self._told
            left = min(left, told - (now - when))
        if left < 1:
            return None
        self._told = (now, left)
        return left


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
        self._since, self._embedded = LIVE.counts(), LIVE.embedded
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

    def _counts(self) -> tuple[int, int, int]:
        """The stage's LLM calls made, cached and their tokens so far: this process's as its
        client ends them (tasks/live.py), or the call log's where it has read more (the
        calls of units on Dask)."""
        r, live = self.report, LIVE.counts() - self._since
        made, cached = max(r.llm_made, live.made), max(r.llm_cached, live.cached)
        return made, cached, max(r.tokens_in + r.tokens_out, live.tokens)

    def _line(self) -> str:
        made, cached, tokens = self._counts()
        flight = f", {LIVE.in_flight} in flight" if LIVE.in_flight else ""
        embedded, embedding = LIVE.embedded - self._embedded, LIVE.embedding
        texts = f", {embedded} texts embedded" if embedded or embedding else ""
        texts += f" ({embedding} under way)" if embedding else ""
        return (
            f"{self.done}/{self.total} units, {made + cached} LLM calls ({cached} cached"
            f"{flight}), {tokens + LIVE.tokens} tokens{texts}, {self.errors} errors"
            f"{self._left()}"
        )

    def _left(self) -> str:
        if self.done >= self.total:
            return ""
        made, cached, _ = self._counts()
        left = self._time_left.seconds(made + cached)
        return ", estimating the time left" if left is None else f", about {left:.0f} s left"

    def advance(self, n: int, errors: int = 0) -> None:
        self.done += n
        self.errors += errors
        if n:
            made, cached, _ = self._counts()
            self._time_left.finished(self.done, made + cached)
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
