"""Dataset statistics: what a dataset version holds and how its surveys' references resolved,
as numbers, a Markdown report and a histogram of input words per sample."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from lilo.tasks.formatting import pipe_table
from lilo.tasks.text import counted

__all__ = ["DatasetStats", "SurveyStats", "stats_markdown"]


@dataclass(frozen=True)
class SurveyStats:
    survey_id: str
    title: str
    references: int
    resolved: int
    samples: int

    @property
    def resolved_rate(self) -> float:
        return self.resolved / self.references if self.references else 0.0


@dataclass(frozen=True)
class DatasetStats:
    dataset_version: str
    number: int | None  # None while the version is not written yet
    input_words: tuple[int, ...]  # one per sample
    papers: int
    surveys: tuple[SurveyStats, ...]
    how: dict[str, int]  # how references were resolved (or why not), over its surveys

    @property
    def samples(self) -> int:
        return len(self.input_words)

    def words_summary(self) -> dict[str, float]:
        """min, quartiles, mean and max of input words per sample (zeros when empty)."""
        words = np.array(self.input_words or (0,), dtype=float)
        q = np.percentile(words, [0, 25, 50, 75, 100])
        return {
            "min": q[0],
            "p25": q[1],
            "median": q[2],
            "mean": float(words.mean()),
            "p75": q[3],
            "max": q[4],
        }


def stats_markdown(stats: DatasetStats) -> str:
    """A dataset version's statistics in Markdown (the artifact adds the histogram)."""
    number = f" (#{stats.number})" if stats.number is not None else ""
    words = stats.words_summary()
    lines = [
        f"# Dataset {stats.dataset_version}{number}",
        "",
        f"{counted(stats.samples, 'sample')}, {counted(stats.papers, 'paper')}, "
        f"{counted(len(stats.surveys), 'survey')}.",
        "",
        pipe_table(
            ["input words per sample", *words], [["", *(f"{v:,.0f}" for v in words.values())]], 1
        ),
        "",
        pipe_table(
            ["survey", "title", "references", "resolved", "rate", "samples"],
            (
                [
                    s.survey_id,
                    s.title,
                    s.references,
                    s.resolved,
                    f"{s.resolved_rate:.0%}",
                    s.samples,
                ]
                for s in stats.surveys
            ),
            2,
        ),
        "",
        pipe_table(
            ["how references resolved", "entries"],
            sorted(stats.how.items(), key=lambda i: -i[1]),
            1,
        ),
    ]
    return "\n".join(lines) + "\n"
