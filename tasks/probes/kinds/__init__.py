"""The probe tasks (docs/design.md §17), one module each, found by the registry
(tasks/registry.py): adding a probe task is adding a file here (docs/contributing.md)."""

from lilo.tasks.probes.kinds.base import (
    Flag,
    ProbeDataError,
    ProbeInputs,
    ProbeTask,
    available_probe_tasks,
    default_positions,
    get_probe_task,
    probe_task,
)

__all__ = [
    "Flag",
    "ProbeDataError",
    "ProbeInputs",
    "ProbeTask",
    "available_probe_tasks",
    "default_positions",
    "get_probe_task",
    "probe_task",
]
