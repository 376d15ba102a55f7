"""The records of what the results show, plain values the warehouse reads into and the
leaderboard and the report lay out (tasks/leaderboard.py, tasks/results_report/).

A drill-down to every answer of a result version (`SummaryDetail`, read by
warehouse/queries/details.py): per summary, its text, its S_l, S_c and S_q, each QA pair with
the answer given from the summary beside the gold one and the judge's grade and reason, and
the checklist's grades. `lilo show` prints these; the report writes them as per-sample pages
that its leaderboard cells link to. `Scope` is what a result version holds, and `ReportData`
one version as the report shows it (read by warehouse/queries/results.py)."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime

import pandas as pd

from lilo.tasks.records import DatasetStats

__all__ = ["Answer", "BoardRows", "ReportData", "Scope", "SummaryDetail", "length_label"]


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


@dataclass(frozen=True)
class Scope:
    """What a result version holds, which is what its run asked for (`res_versions`): its
    cells are `variants` x `lengths` on `backbone`, each over `samples` (of the
    `dataset_samples` its dataset version has), judged by `judge`."""

    dataset_version: str
    samples: list[str]
    dataset_samples: int
    variants: list[str]
    lengths: list[int]
    backbone: str
    judge: str

    def line(self) -> str:
        return f"Scope: {self.describe()}"

    def describe(self) -> str:
        lengths = ", ".join(length_label(n) for n in self.lengths)
        return (
            f"{len(self.samples)} of {self.dataset_samples} samples of dataset "
            f"{self.dataset_version}; methods {', '.join(self.variants)}; lengths {lengths}; "
            f"backbone {self.backbone}; judge {self.judge or '-'}"
        )


def length_label(words: int) -> str:
    """4000 -> 4k, 16000 -> 16k, 4500 -> 4500."""
    return f"{words // 1000}k" if words >= 1000 and words % 1000 == 0 else str(words)


@dataclass(frozen=True)
class ReportData:
    """One result version as DataFrames, plus its dataset's statistics when known (they
    are read by the samples stage's code, which lives above tasks)."""

    version: int
    created_at: datetime
    dataset_version: str
    partial: bool
    leaderboard: pd.DataFrame
    position_curve: pd.DataFrame
    lengths: pd.DataFrame
    cost: pd.DataFrame
    failures: pd.DataFrame
    stats: DatasetStats | None = None
    # Each variant minus the reference method, paired by sample (`res_paired`).
    paired: pd.DataFrame = field(default_factory=pd.DataFrame)
    # What the version holds: what its run asked for (None: not recorded).
    scope: Scope | None = None


@dataclass(frozen=True)
class BoardRows:
    """One result version's leaderboard rows as the warehouse reads them (`res_leaderboard`,
    version included); tasks/leaderboard.py's `Board` lays them out."""

    version: int
    dataset_version: str
    partial: bool
    published: bool
    rows: pd.DataFrame
    # `res_paired` rows of the version: each variant minus the reference, paired by sample.
    paired: pd.DataFrame = field(default_factory=pd.DataFrame)
    scope: Scope | None = None
