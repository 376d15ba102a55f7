"""What a report shows of one result version (read by warehouse/queries/results.py)."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime

import pandas as pd

from lilo.tasks.leaderboard import Scope
from lilo.tasks.records import DatasetStats

__all__ = ["ReportData"]


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
