"""RAPID's writing order (docs/design.md §15): a topological order of the sections by their
dependencies, stable in outline order; a cycle falls back to the outline order."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

__all__ = ["topological_order"]


def topological_order(
    sections: Sequence[int], depends: Mapping[int, Sequence[int]]
) -> tuple[list[int], bool]:
    """(order, acyclic). Kahn's algorithm, always taking the earliest ready section in
    outline order; dependencies on unknown sections or on itself are ignored. With a
    cycle the outline order is returned and False."""
    known = set(sections)
    needs = {s: {d for d in depends.get(s, ()) if d in known and d != s} for s in sections}
    order: list[int] = []
    while len(order) < len(sections):
        ready = [s for s in sections if s not in order and needs[s] <= set(order)]
        if not ready:
            return list(sections), False
        order.append(ready[0])
    return order, True
