"""Scores (DESIGN §8) as plug-ins: `get_scorer(name, settings).score(...) -> list[ScoreRow]`."""

from tasks.scoring.base import Scored, Scorer, ScorerFactory, available_scorers, get_scorer, scorer
from tasks.scoring.consistency import consistency_score
from tasks.scoring.length import length_score
from tasks.scoring.quality import quality_score

__all__ = [
    "Scored",
    "Scorer",
    "ScorerFactory",
    "available_scorers",
    "consistency_score",
    "get_scorer",
    "length_score",
    "quality_score",
    "scorer",
]
