"""Scores (docs/design.md §8) as plug-ins: `get_scorer(name)(ScoreContext(...)) -> Scored`."""

from lilo.tasks.scoring.base import (
    Headline,
    ScoreContext,
    Scored,
    Scorer,
    available_scorers,
    get_scorer,
    leaderboard_scores,
    scored_by,
    scorer,
)
from lilo.tasks.scoring.consistency import consistency_score
from lilo.tasks.scoring.length import length_score
from lilo.tasks.scoring.quality import quality_score

__all__ = [
    "Headline",
    "ScoreContext",
    "Scored",
    "Scorer",
    "available_scorers",
    "consistency_score",
    "get_scorer",
    "leaderboard_scores",
    "length_score",
    "quality_score",
    "scored_by",
    "scorer",
]
