"""Jinja's immutable sandbox with a budget per render, for templates from outside lilo: a
render that builds a string or list past `max_size` (4 times the characters it was given,
plus 1,000,000) or runs past `RENDER_SECONDS` stops with `TemplateTooCostly`, however the
template grows (`{% set a = a ~ a %}`, `l + l`, a filter's result, the output) or loops
(nested `{% for %}`). Every `~`, binary operator, filter and loop step is counted."""

from __future__ import annotations

import contextvars
import functools
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import Any

import jinja2
from jinja2 import nodes
from jinja2.compiler import CodeGenerator, Frame
from jinja2.sandbox import ImmutableSandboxedEnvironment

from lilo.tasks.errors import InputError

__all__ = ["RENDER_SECONDS", "BoundedEnvironment", "TemplateTooCostly", "render_within"]

RENDER_SECONDS = 10.0
_GROWTH, _SLACK = 4, 1_000_000
_LOOP_FILTER = "lilo_bounded_loop"


class TemplateTooCostly(InputError):
    """A template from outside lilo whose render went past its size or time bound."""


@dataclass
class _Budget:
    seconds: float
    max_size: int

    def __post_init__(self) -> None:
        self.deadline = time.monotonic() + self.seconds

    def check(self, value: Any = None, size: int = 0) -> Any:
        """`value`, once the render is within its time and `value` (a string or list) or
        what is about to be built (`size`) within its size."""
        if time.monotonic() > self.deadline:
            raise TemplateTooCostly(f"rendering took over {self.seconds:g} s")
        if isinstance(value, str | list | tuple):
            size = max(size, len(value))
        if size > self.max_size:
            raise TemplateTooCostly(
                f"rendering built a value of over {self.max_size:,} characters or items"
            )
        return value


_BUDGET: contextvars.ContextVar[_Budget | None] = contextvars.ContextVar("budget", default=None)


def _check(value: Any = None, size: int = 0) -> Any:
    budget = _BUDGET.get()
    return value if budget is None else budget.check(value, size)


def _given_size(value: Any) -> int:
    """The characters (and items) of what a template is rendered with."""
    if isinstance(value, str):
        return len(value)
    if isinstance(value, list | tuple):
        return len(value) + sum(_given_size(v) for v in value)
    if isinstance(value, dict):
        return len(value) + sum(_given_size(v) for v in value.values())
    return len(str(value))


def _length(value: Any) -> int:
    return len(value) if isinstance(value, str | list | tuple) else 0


class _BoundedCode(CodeGenerator):
    """`~` joins through the environment's `bounded_join`, which counts it."""

    def visit_Concat(self, node: nodes.Concat, frame: Frame) -> None:
        self.write("environment.bounded_join((")
        for arg in node.nodes:
            self.visit(arg, frame)
            self.write(", ")
        self.write("))")


class _BoundedTemplate(jinja2.Template):
    def render(self, *args: Any, **kwargs: Any) -> str:
        """The output, within the budget of what it was given (`TemplateTooCostly`)."""
        return self.render_within(RENDER_SECONDS, dict(*args, **kwargs))

    def render_within(self, seconds: float, variables: dict[str, Any]) -> str:
        """`render` with a deadline `seconds` away."""
        budget = _Budget(seconds, _GROWTH * _given_size(variables) + _SLACK)
        token = _BUDGET.set(budget)
        try:
            return super().render(variables)
        finally:
            _BUDGET.reset(token)


def _bounded_filter(function: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(function)  # keeps Jinja's pass_context/pass_environment mark
    def bounded(*args: Any, **kwargs: Any) -> Any:
        _check()
        return _check(function(*args, **kwargs))

    return bounded


def _bounded_loop(items: Iterable[Any]) -> Iterator[Any]:
    for item in items:
        yield _check(item)


class BoundedEnvironment(ImmutableSandboxedEnvironment):
    """The immutable sandbox, each render within its budget (see the module)."""

    code_generator_class = _BoundedCode
    template_class = _BoundedTemplate
    intercepted_binops = frozenset({"+", "-", "*", "/", "//", "%", "**"})

    def __init__(self, **options: Any) -> None:
        super().__init__(**options)
        self.filters = {name: _bounded_filter(f) for name, f in self.filters.items()}
        self.filters[_LOOP_FILTER] = _bounded_loop

    def concat(self, chunks: Iterable[str]) -> str:
        """The output, counted chunk by chunk."""
        out, size = [], 0
        for chunk in chunks:
            size += len(chunk)
            _check(size=size)
            out.append(chunk)
        return "".join(out)

    def bounded_join(self, values: Iterable[Any]) -> str:
        """`a ~ b ~ ...`, refused before a string past the budget is built."""
        parts = [str(v) for v in values]
        _check(size=sum(map(len, parts)))
        return "".join(parts)

    def call_binop(
        self, context: jinja2.runtime.Context, operator: str, left: Any, right: Any
    ) -> Any:
        """An operator, refused before a string or list past the budget is built."""
        if operator == "+":
            _check(size=_length(left) + _length(right))
        elif operator == "*" and isinstance(right, int) and not isinstance(right, bool):
            _check(size=_length(left) * right)
        elif operator == "*" and isinstance(left, int) and not isinstance(left, bool):
            _check(size=_length(right) * left)
        return _check(super().call_binop(context, operator, left, right))

    def _generate(self, source: nodes.Template, *args: Any, **kwargs: Any) -> str:
        for loop in source.find_all(nodes.For):  # each step of a loop is counted
            loop.iter = nodes.Filter(
                loop.iter, _LOOP_FILTER, [], [], None, None, lineno=loop.lineno
            )
        return super()._generate(source, *args, **kwargs)


def render_within(template: jinja2.Template, seconds: float, variables: dict[str, Any]) -> str:
    """A template of a `BoundedEnvironment` rendered with a deadline `seconds` away."""
    assert isinstance(template, _BoundedTemplate)
    return template.render_within(seconds, variables)
