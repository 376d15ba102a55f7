"""The scorer registry (docs/design.md §8): one module per score, found by the one plug-in
registry (tasks/registry.py).

A scorer is a function of one `ScoreContext` (the generation, its sample and papers, the
sample's QA pairs, the judge, the prompt pack, the settings), marked `@scorer("name")`; it
takes from the context what it needs and returns `Scored`. Scorers record nothing: they
return long rows `(generation_id, score, value, detail, judge)`, and the scores they could
not give, and the flow writes them. LLM scores ask the `judge` client (the configured judge,
not the model under test) with the dataset version's prompt pack. Adding a score is one
file here: `@scorer("name", label="S_x", order=n)` puts the score on the leaderboard (a column
named by its label, in `order`), in the intervals and paired comparisons, and in the docs'
generated tables (docs/contributing.md). A `diagnostic=True` score is shown as one (a column,
intervals, the cell page) but says nothing of quality: a generation counts as scored without
it, and it has no paired comparison.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field

from lilo.tasks.config import Settings
from lilo.tasks.errors import InputError
from lilo.tasks.llm import LLMClient
from lilo.tasks.prompt_packs import PromptPack
from lilo.tasks.records import Generation, PaperText, QAPair, Sample, ScoreRow
from lilo.tasks.registry import Registry

__all__ = [
    "Headline",
    "ScoreContext",
    "Scored",
    "Scorer",
    "available_scorers",
    "get_scorer",
    "leaderboard_scores",
    "scored_by",
    "scorer",
]


@dataclass(frozen=True)
class Scored:
    """One generation's rows, and `unscored`: score name -> why it has no row (every
    judgment it rests on was unusable; unusable ones are listed in the rows' detail)."""

    rows: list[ScoreRow]
    unscored: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class ScoreContext:
    """What a scorer may read for one generation: `papers` in the sample's order, `qa` the
    sample's QA pairs (a scorer keeps the approved ones), `judge` the judge's client."""

    generation: Generation
    sample: Sample
    papers: list[PaperText]
    qa: list[QAPair]
    judge: LLMClient
    pack: PromptPack
    settings: Settings


Scorer = Callable[[ScoreContext], Scored]

# A leaderboard label: the column's name in the views (lower-cased: `s_l`), so a word.
_LABEL = re.compile(r"^S_[A-Za-z0-9]+$")
_NAME = re.compile(r"^[a-z][a-z0-9_]*$")


@dataclass(frozen=True)
class Headline:
    """A score on the leaderboard: its `name` in the score rows, its `label` as the table
    shows it (S_l), `column` the views' (s_l), `about` what it measures; a `diagnostic` is
    not a quality score (a generation counts as scored without it; no paired comparison)."""

    name: str
    label: str
    order: int
    about: str
    diagnostic: bool = False

    @property
    def column(self) -> str:
        return self.label.lower()


@dataclass(frozen=True)
class _Entry:
    score: Scorer
    headline: Headline | None


_SCORERS: Registry[_Entry] = Registry(
    "scorer", __package__, "add tasks/scoring/{name}.py with @scorer({name!r})"
)


def scorer(
    name: str, *, label: str = "", order: int = 100, about: str = "", diagnostic: bool = False
) -> Callable[[Scorer], Scorer]:
    """Register a scorer under `name` (the module's file stem by convention). With a
    `label` ("S_x") the score is a headline: a leaderboard column, in `order` (lower first;
    ties by name), `about` saying what it measures in the docs' tables; without, it is
    recorded only. A `diagnostic` headline is no quality score: a generation counts as scored
    once it has every other headline score, and it has no paired comparison."""
    if not _NAME.match(name):
        raise InputError(f"scorer {name!r}: give it a name of lower-case letters, digits and _")
    if label and not _LABEL.match(label):
        raise InputError(f"scorer {name!r}: label {label!r} is not like S_x: give one like S_q")

    def register(function: Scorer) -> Scorer:
        headline = Headline(name, label, order, about, diagnostic) if label else None
        _SCORERS.add(name, _Entry(function, headline), function.__module__)
        return function

    return register


def available_scorers() -> list[str]:
    return _SCORERS.names()


def get_scorer(name: str) -> Scorer:
    """The scorer `name`; an unknown one raises `UnknownName`."""
    return _SCORERS.get(name).score


def leaderboard_scores() -> list[Headline]:
    """The leaderboard's scores, in their column order."""
    found = [_SCORERS.get(n).headline for n in _SCORERS.names()]
    return sorted((h for h in found if h), key=lambda h: (h.order, h.name))


def scored_by() -> list[str]:
    """The scores a generation has once it counts as scored: every leaderboard score's name
    but the diagnostics', in column order."""
    return [h.name for h in leaderboard_scores() if not h.diagnostic]
