"""The scorer registry (docs/design.md §8): one module per score, found by the one plug-in
registry (tasks/registry.py).

A scorer is a function of one `ScoreContext` (the generation, its sample and papers, the
sample's QA pairs, the judge, the prompt pack, the settings), marked `@scorer("name")`; it
takes from the context what it needs and returns `Scored`. Scorers record nothing: they
return long rows `(generation_id, score, value, detail, judge)`, and the scores they could
not give, and the flow writes them. LLM scores ask the `judge` client (the configured judge,
not the model under test) with the dataset version's prompt pack. Adding a score is one
file here.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from lilo.tasks.config import Settings
from lilo.tasks.llm import LLMClient
from lilo.tasks.prompt_packs import PromptPack
from lilo.tasks.records import Generation, PaperText, QAPair, Sample, ScoreRow
from lilo.tasks.registry import Registry

__all__ = ["ScoreContext", "Scored", "Scorer", "available_scorers", "get_scorer", "scorer"]


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

_SCORERS: Registry[Scorer] = Registry(
    "scorer", __package__, "add tasks/scoring/{name}.py with @scorer({name!r})"
)


def scorer(name: str) -> Callable[[Scorer], Scorer]:
    """Register a scorer under `name` (the module's file stem by convention)."""

    def register(function: Scorer) -> Scorer:
        _SCORERS.add(name, function, function.__module__)
        return function

    return register


def available_scorers() -> list[str]:
    return _SCORERS.names()


def get_scorer(name: str) -> Scorer:
    """The scorer `name`; an unknown one raises `UnknownName`."""
    return _SCORERS.get(name)
