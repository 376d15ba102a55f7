"""A probe task as a plug-in (docs/design.md §17; lilo's one plug-in shape,
tasks/registry.py): one module in this package registers a `ProbeTask` with `probe_task`,
saying what the command line offers, which settings it reads (and the model of its own
section, `probe.<task>`), how it makes its items, the prompt of one unit and how a reply is
graded. The flows, `lilo probe`, the report and the warehouse's queries ask the registry;
none of them names a task."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import reduce
from typing import Any, get_args

import numpy as np

from lilo.tasks.config import PROBE_SECTIONS, ProbeSettings, Section
from lilo.tasks.errors import InputError, LiloError
from lilo.tasks.probe_records import ProbeItem, ProbeUnit
from lilo.tasks.probes.prompts import ProbePrompts
from lilo.tasks.records import PaperText, QAPair
from lilo.tasks.registry import Registry

__all__ = [
    "Embed",
    "Flag",
    "Make",
    "ProbeDataError",
    "ProbeInputs",
    "ProbeTask",
    "available_probe_tasks",
    "default_positions",
    "get_probe_task",
    "probe_task",
]

Embed = Callable[[list[str]], np.ndarray]


class ProbeDataError(InputError):
    """The probe data asked for is not there (not imported, too few QA pairs...)."""


@dataclass(frozen=True)
class Flag:
    """A `lilo probe TASK` option for the `probe` setting `setting` (`examples`), or for one
    of the task's own section (`<task>.<name>`): its type (and choices) come from the
    setting's declaration."""

    setting: str
    flag: str
    help: str


@dataclass
class ProbeInputs:
    """What a probe run reads from the warehouse before it closes it: the published items
    by size, and for a task whose sources name them, the NQ oracle items (`nq-oracle`) and
    the approved QA pairs with their papers and samples (`warehouse`)."""

    published: dict[int, list[ProbeItem]]
    oracle: list[ProbeItem] = field(default_factory=list)
    pairs: list[QAPair] = field(default_factory=list)
    papers: dict[str, PaperText] = field(default_factory=dict)
    samples: dict[str, list[str]] = field(default_factory=dict)


# (sizes wanted, the probe settings, what was read, the embedder) -> (items, a line per
# question left out); ProbeDataError when there is nothing to make them from.
Make = Callable[
    [Sequence[int], ProbeSettings, ProbeInputs, Embed], tuple[list[ProbeItem], list[str]]
]


@dataclass(frozen=True)
class ProbeTask:
    """One probe task. `sizes` is the option and `probe` setting of its sizes (keys,
    documents...); `sources` the values of `probe.source` it accepts (`auto` and
    `published` first); `baselines` the boolean `probe` settings naming a baseline setting
    of a unit (`closed_book`, `oracle`); `flags` its options beyond the common ones;
    `paper_positions` the gold positions the authors ran, by size; `settings` the model of
    its own section of the settings, `probe.<name>` (its sizes, say), which `make` reads
    with `cfg.section(name)`; `stop` where a reply to its completion form ends."""

    name: str
    title: str
    unit: str
    sizes: Flag
    sources: tuple[str, ...]
    source_help: str
    make: Make
    prompt: Callable[[ProbeUnit, ProbePrompts], str]
    grade: Callable[[str, ProbeItem], bool]
    baselines: tuple[str, ...] = ()
    flags: tuple[Flag, ...] = ()
    paper_positions: Mapping[int, tuple[int, ...]] = field(default_factory=dict)
    settings: type[Section] | None = None
    stop: tuple[str, ...] = ()

    def sizes_of(self, cfg: ProbeSettings) -> tuple[int, ...]:
        return _value(cfg, self.sizes.setting)

    def baselines_of(self, cfg: ProbeSettings) -> tuple[str, ...]:
        return tuple(b for b in self.baselines if _value(cfg, b))


_TASKS: Registry[ProbeTask] = Registry(
    "probe task",
    __package__,
    "add tasks/probes/kinds/{name}.py that calls probe_task(ProbeTask({name!r}, ...))",
)


def probe_task(task: ProbeTask, origin: str) -> ProbeTask:
    """Register `task` from module `origin` (pass `__name__`), and its own section's model
    as `probe.<name>`; a setting it names that neither `ProbeSettings` nor its own section
    declares, or a source `probe.source` does not allow, is refused here."""
    fields = ProbeSettings.model_fields
    if task.settings and task.name in fields:
        raise LiloError(
            f"probe task {task.name!r} ({origin}): probe.{task.name} is a setting of every "
            "probe task, not a task's section: rename the task"
        )
    own = {f"{task.name}.{n}" for n in (task.settings.model_fields if task.settings else ())}
    named = [task.sizes.setting, *(f.setting for f in task.flags), *task.baselines]
    unknown = [n for n in named if n not in fields and n not in own]
    unknown += [s for s in task.sources if s not in get_args(fields["source"].annotation)]
    if unknown:
        raise LiloError(
            f"probe task {task.name!r} ({origin}) names {', '.join(unknown)}: not a `probe` "
            f"setting, a setting of its own section (`{task.name}.<name>`, declared by its "
            "`settings` model) or a source"
        )
    if task.settings:
        PROBE_SECTIONS.add(task.name, task.settings, origin)
    _TASKS.add(task.name, task, origin)
    return task


def _value(cfg: ProbeSettings, setting: str) -> Any:
    return reduce(getattr, setting.split("."), cfg)


def get_probe_task(name: str) -> ProbeTask:
    """The registered task; `UnknownName` listing the known ones otherwise."""
    return _TASKS.get(name)


def available_probe_tasks() -> list[str]:
    return _TASKS.names()


def default_positions(task: str, size: int) -> tuple[int, ...]:
    """The paper's positions for its sizes (the task's `paper_positions`); for any other
    size the first index, the last, and the ends of the first three quarters (0, k/4 - 1,
    k/2 - 1, 3k/4 - 1, k - 1)."""
    if size in (paper := get_probe_task(task).paper_positions):
        return paper[size]
    quarters = {max(0, round(size * q / 4) - 1) for q in (1, 2, 3)}
    return tuple(sorted({0, size - 1} | quarters))
