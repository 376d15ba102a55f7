"""A stage's progress, as it goes: a bar in the terminal (rich), else a line in the log at a
steady interval (a pipe, a log file, a deployment's run), and a Prefect progress artifact,
each with units done / total, LLM calls, tokens, errors and the time left. The counts are
the stage report's, which counts each call as its stage writer reads it from the call log
(flows/_stage_writer.py), and this process's requests in flight with the tokens they have
streamed so far (tasks/llm/live.py), so the line moves during a long request. The line is
made when it is shown: the time left counts down from the pace of the units finished,
never up while none finishes; before the first unit, and once a unit is overdue, it says
"estimating"."""

from __future__ import annotations

import contextvars
import sys
import threading
import time
from types import TracebackType
from uuid import UUID

from rich.progress import ProgressColumn, Task
from rich.text import Text

from lilo.flows._artifacts import progress_artifact, update_progress
from lilo.flows._bar import bar
from lilo.flows._stage import StageReport, log
from lilo.tasks.llm.live import LIVE

__all__ = ["StageProgress"]


class StageProgress:
    """Call `advance` as units finish; the artifact is updated at most every `every_s`.
    Without a terminal, a line `stage: <progress>` is logged every `line_every_s`, units
    finished or not, until the stage ends."""

    def __init__(
        self, report: StageReport, total: int, every_s: float = 2.0, line_every_s: float = 30.0
    ) -> None:
        self.report, self.total, self.every_s = report, total, every_s
        self.done = self.errors = 0
        self._started = self._last = self._finished_at = time.monotonic()
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
        """The time left at the pace of the units finished, less the time since the last
        one finished; "estimating" before the first, and once that runs out."""
        if self.done >= self.total:
            return ""
        if self.done:
            pace = (self._finished_at - self._started) / self.done
            left = pace * (self.total - self.done) - (time.monotonic() - self._finished_at)
            if left >= 1:
                return f", about {left:.0f} s left"
        return ", estimating the time left"

    def advance(self, n: int, errors: int = 0) -> None:
        if n:
            self._finished_at = time.monotonic()
        self.done += n
        self.errors += errors
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
