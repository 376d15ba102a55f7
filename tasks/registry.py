"""lilo's one plug-in shape (docs/design.md §7, §8): a `Registry` maps names to what a
decorator in each plug-in module registers, and finds the plug-ins by importing every public
module of its package, once: adding a method or a score is adding a file. An installed
package adds plug-ins through an entry point of the package's group (`ENTRY_POINT_GROUPS`,
as pytest's `pytest11`), loaded at the same time; one that fails to load is a warning, and
asking for its name is `PluginFailed`. An unknown name raises `UnknownName`
(tasks/errors.py), whose message lists the known names."""

from __future__ import annotations

import difflib
import importlib
import logging
import pkgutil
import threading
from importlib.metadata import EntryPoint, entry_points
from types import ModuleType
from typing import Generic, TypeVar

from lilo.tasks.errors import LiloError, UnknownName

__all__ = [
    "ENTRY_POINT_GROUPS",
    "PluginFailed",
    "Registry",
    "did_you_mean",
    "import_modules",
    "load_entry_points",
]

T = TypeVar("T")
log = logging.getLogger("lilo")
_warned: set[str] = set()

# The entry-point group through which an installed package adds plug-ins to a package of
# lilo's (docs/contributing.md): each entry point names a module that registers as a file
# of that package does.
ENTRY_POINT_GROUPS = {
    "lilo.tasks.methods": "lilo.methods",
    "lilo.tasks.scoring": "lilo.scorers",
    "lilo.tasks.probes.kinds": "lilo.probe_tasks",
    "lilo.flows.importers": "lilo.importers",
}


class PluginFailed(LiloError):
    """An installed package's plug-in that failed to load, asked for by name."""

    complete = True


def did_you_mean(name: str, known: list[str]) -> str:
    """ " did you mean 'x'?" for the known name nearest `name` (case aside), or ""."""
    by_lower = {k.lower(): k for k in known}
    close = difflib.get_close_matches(name.lower(), list(by_lower), n=1, cutoff=0.75)
    return f" did you mean {by_lower[close[0]]!r}?" if close else ""


def import_modules(package: str) -> list[ModuleType]:
    """Every public module of `package` (not `_private`, not `base`), imported, by name."""
    found = pkgutil.iter_modules(importlib.import_module(package).__path__)
    names = sorted(i.name for i in found if i.name != "base" and not i.name.startswith("_"))
    return [importlib.import_module(f"{package}.{name}") for name in names]


def load_entry_points(package: str) -> dict[str, str]:
    """Load every installed entry point of `package`'s group (`ENTRY_POINT_GROUPS`); the
    ones that fail, by entry-point name, each with the line that says which and what to do
    (also logged as a warning, once)."""
    group = ENTRY_POINT_GROUPS.get(package)
    failed: dict[str, str] = {}
    for ep in entry_points(group=group) if group else ():
        try:
            ep.load()
        except Exception as exc:  # a third party's module: any error, reported, not raised
            failed[ep.name] = _failure(ep, group or "", exc)
            if failed[ep.name] not in _warned:
                _warned.add(failed[ep.name])
                log.warning("%s", failed[ep.name])
    return failed


def _failure(ep: EntryPoint, group: str, exc: Exception) -> str:
    dist = ep.dist.name if ep.dist is not None else "an unknown package"
    return (
        f"plug-in {ep.name!r} of package {dist} (entry point {group}: {ep.value}) failed to "
        f"load: {type(exc).__name__}: {exc}; fix or uninstall {dist}"
    )


class Registry(Generic[T]):
    """Entries by name for the plug-ins of `package`, each a `kind` (e.g. "method") that a
    module registers with `add`; `hint` says how to write a new one (`{name}` is filled).
    The modules of the packages named in `also` may register entries too (a method's own
    offline reply): they are imported by name, so a lower layer names a higher one's
    package without importing it. Each package's installed entry points load with it."""

    def __init__(self, kind: str, package: str, hint: str, also: tuple[str, ...] = ()) -> None:
        self.kind, self.package, self.hint, self.also = kind, package, hint, also
        self._entries: dict[str, tuple[T, str]] = {}
        self._lock = threading.RLock()
        self._discovered = False
        self._failed: dict[str, str] = {}

    def add(self, name: str, entry: T, origin: str) -> None:
        """Register `entry` under `name` from module `origin`; the same name from a second
        module is refused (a module imported again replaces its own entry)."""
        if name in self._entries and self._entries[name][1] != origin:
            raise LiloError(
                f"{self.kind} {name!r} is registered by {self._entries[name][1]} and {origin}: "
                "rename one of them"
            )
        self._entries[name] = (entry, origin)

    def get(self, name: str) -> T:
        self._discover()
        if name not in self._entries and name in self._failed:
            raise PluginFailed(self._failed[name])
        if name not in self._entries:
            raise UnknownName(
                f"unknown {self.kind} {name!r}:{did_you_mean(name, self.names())} known are "
                f"{', '.join(self.names())}; " + self.hint.format(name=name)
            )
        return self._entries[name][0]

    def names(self) -> list[str]:
        self._discover()
        return sorted(self._entries)

    def _discover(self) -> None:
        with self._lock:
            if not self._discovered:
                for package in (self.package, *self.also):
                    import_modules(package)
                    self._failed.update(load_entry_points(package))
                self._discovered = True
