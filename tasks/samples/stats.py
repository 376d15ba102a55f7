"""Dataset statistics: what a dataset version holds and how its surveys' references resolved,
as numbers, a Markdown report and a histogram of input words per sample."""

from __future__ import annotations

from lilo.tasks.formatting import pipe_table
from lilo.tasks.records import DatasetStats
from lilo.tasks.text import counted

__all__ = ["stats_markdown"]


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
