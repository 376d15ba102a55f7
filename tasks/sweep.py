"""Sweeps of method settings (`--sweep generate.ral.k=4,8,12,16`; two sweeps make a grid):
each point of the grid is the run's settings with those values, and each method it changes
is one more named variant on the leaderboard (`ral_writer[k=8]`, `ral_writer[a=20,b=0.3]`),
the label its `@method(variant=...)` gives those arguments (tasks/methods/base.py)."""

from __future__ import annotations

import itertools
import json
from typing import Any

from lilo.tasks.config import Settings
from lilo.tasks.errors import InputError
from lilo.tasks.methods import Method, get_method

__all__ = ["Point", "SweepError", "method_variants", "parse_sweep", "sweep_points"]

Point = tuple[tuple[str, Any], ...]
"""One point of a sweep: (setting, value) pairs; () is the run's own settings."""


class SweepError(InputError):
    """A sweep that names no setting, or whose variants the leaderboard could not tell apart."""


def parse_sweep(item: str) -> tuple[str, list[Any]]:
    """`generate.ral.k=4,8,12,16` -> ("generate.ral.k", [4, 8, 12, 16]); values read as JSON
    numbers or booleans where they are, else as text."""
    key, sep, values = item.partition("=")
    found = [v.strip() for v in values.split(",") if v.strip()]
    if not sep or not key.strip() or not found:
        raise SweepError(f"{item!r} is not SETTING=V1,V2,..., e.g. generate.ral.k=4,8,12,16")
    return key.strip(), [_value(v) for v in found]


def _value(text: str) -> Any:
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        return text


def sweep_points(sweep: dict[str, Any]) -> list[Point]:
    """Every combination of the swept values, in the order given; [()] without a sweep."""
    keys = list(sweep)
    return [tuple(zip(keys, values, strict=True)) for values in itertools.product(*sweep.values())]


def method_variants(settings: Settings) -> list[tuple[str, Point, Method]]:
    """Each configured method at each point of `generate.sweep`, once per distinct set of
    arguments (a method the sweep does not touch runs once, at its own settings)."""
    found: dict[tuple[str, str], tuple[str, Point, Method]] = {}
    labels: dict[str, str] = {}
    for point in sweep_points(dict(settings.generate.sweep)):
        try:
            at = settings.with_overrides(dict(point)) if point else settings
        except ValueError as exc:
            raise SweepError(f"sweep point {_show(point)}: {exc}") from exc
        for name in settings.generate.methods:
            spec = get_method(name, at.generate, at.llm, at.embedding)
            args = json.dumps(spec.args, sort_keys=True, default=str)
            if (name, args) in found:
                continue
            if labels.get(spec.variant, args) != args:
                raise SweepError(
                    f"sweep point {_show(point)} gives {name} other arguments but the same "
                    f"leaderboard label {spec.variant!r}: sweep a setting its variant names "
                    "(e.g. generate.ral.a, .b, .k)"
                )
            labels[spec.variant] = args
            found[(name, args)] = (name, point, spec)
    return list(found.values())


def _show(point: Point) -> str:
    return ", ".join(f"{k}={v}" for k, v in point) or "(the run's settings)"
