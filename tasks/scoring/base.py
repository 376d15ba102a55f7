"""The scorer registry (DESIGN §8, STYLE.md): one module per score, found by `pkgutil`.

A scorer is a factory marked `@scorer("name")` that takes the Settings and returns an
object with `score(...) -> Scored`. Scorers record nothing: they return long rows
`(generation_id, score, value, detail, judge)`, and the scores they could not give, and the
flow writes them. LLM scores ask the `judge` client (the configured judge, not the model
under test) with the dataset version's prompt pack. Adding a score is one file here.
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Protocol, TypeVar

from tasks.config import Settings
from tasks.llm import LLMClient
from tasks.prompts import PromptPack
from tasks.records import Generation, PaperText, QAPair, Sample, ScoreRow

__all__ = ["Scored", "Scorer", "ScorerFactory", "available_scorers", "get_scorer", "scorer"]


@dataclass(frozen=True)
class Scored:
    """One generation's rows, and `unscored`: score name -> why it has no row (every
    judgment it rests on was unusable; unusable ones are listed in the rows' detail)."""

    rows: list[ScoreRow]
    unscored: dict[str, str] = field(default_factory=dict)


class Scorer(Protocol):
    def score(
        self,
        generation: Generation,
        sample: Sample,
        papers: list[PaperText],
        qa: list[QAPair],
        judge: LLMClient,
        pack: PromptPack,
    ) -> Scored: ...


ScorerFactory = Callable[[Settings], Scorer]
F = TypeVar("F", bound=ScorerFactory)

_REGISTRY: dict[str, ScorerFactory] = {}


def scorer(name: str) -> Callable[[F], F]:
    """Register a factory under `name` (the module's file stem by convention)."""

    def register(factory: F) -> F:
        if name in _REGISTRY and _REGISTRY[name] is not factory:
            raise ValueError(f"scorer {name!r} is registered twice: rename one of them")
        _REGISTRY[name] = factory
        return factory

    return register


def _discover() -> None:
    package = __name__.rsplit(".", 1)[0]
    for info in pkgutil.iter_modules(importlib.import_module(package).__path__):
        if info.name != "base" and not info.name.startswith("_"):
            importlib.import_module(f"{package}.{info.name}")


def available_scorers() -> list[str]:
    _discover()
    return sorted(_REGISTRY)


def get_scorer(name: str, settings: Settings) -> Scorer:
    _discover()
    if name not in _REGISTRY:
        known = ", ".join(sorted(_REGISTRY))
        raise KeyError(
            f"unknown scorer {name!r}: choose one of {known} or add tasks/scoring/{name}.py"
        )
    return _REGISTRY[name](settings)
