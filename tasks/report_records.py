"""The records of what the results show, plain values the warehouse reads into and the
leaderboard and the report lay out (tasks/leaderboard.py, tasks/results_report/).

A drill-down to every answer of a result version (`SummaryDetail`, read by
warehouse/queries/details.py): per summary, its text, its S_l, S_c and S_q, each QA pair with
the answer given from the summary beside the gold one and the judge's grade and reason, and
the checklist's grades. `lilo show` prints these; the report writes them as per-sample pages
that its leaderboard cells link to."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["Answer", "SummaryDetail"]


@dataclass(frozen=True)
class Answer:
    """One QA pair asked of a summary: the gold answer, the one given from the summary, and
    the judge's grade (0 to 1) and reason. `position` is the 1-based position of a
    single-paper pair's paper in the summary's input; None for a cross-paper pair."""

    qa_id: str
    kind: str
    position: int | None
    question: str
    gold: str
    given: str
    grade: float | None
    reason: str


@dataclass(frozen=True)
class SummaryDetail:
    generation_id: str
    sample_id: str
    method: str  # the variant, as the leaderboard names it
    target_words: int
    backbone: str
    words: int
    text: str
    scores: dict[str, float | None]  # each leaderboard score by name, in order (x100)
    answers: tuple[Answer, ...]
    checklist: dict[str, float]  # quality aspect -> grade (x100)
    # The most tokens one prompt left out of the papers (generate.fit_input); None: not fitted.
    left_out: int | None = None

    @property
    def anchor(self) -> str:
        """The summary's id on its sample's page."""
        return f"{self.method}-{self.target_words}"
