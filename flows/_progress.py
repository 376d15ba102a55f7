"""A stage's progress, as it goes: a bar in the terminal (rich), else a line in the log at a
steady interval (a pipe, a log file, a deployment's run), and a Prefect progress artifact,
each with units done / total, LLM calls, tokens, errors and the time left. The counts are
the stage report's, which counts each call as its stage writer reads it from the call log
(flows/_stage_writer.py); the line is made when it is shown, so the time left runs on
between units."""

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
        self._started = self._last = time.monotonic()
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
        # The pace so far, up to now: while no unit finishes, the time left grows rather
        # than stay at what the last unit left (a last long unit, a stalled endpoint).
        elapsed = time.monotonic() - self._started
        left = elapsed / self.done * (self.total - self.done) if self.done else None
        eta = f", about {left:.0f} s left" if left is not None and self.done < self.total else ""
        return (
            f"{self.done}/{self.total} units, {calls} LLM calls ({r.llm_cached} cached), "
            f"{r.tokens_in + r.tokens_out} tokens, {self.errors} errors{eta}"
        )

    def advance(self, n: int, errors: int = 0) -> None:
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
