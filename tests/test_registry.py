"""lilo's one plug-in shape (tasks/registry.py): methods and scorers are found the same way,
once, and an unknown name is one error, `UnknownName`, that lists the known names. Every
method takes typed parameters and every scorer one `ScoreContext`."""

from __future__ import annotations

import importlib
import inspect
import sys
from pathlib import Path

import pytest

from lilo.tasks.config_loading import load_settings
from lilo.tasks.errors import InputError, LiloError, UnknownName
from lilo.tasks.methods import available_methods, get_method
from lilo.tasks.registry import Registry
from lilo.tasks.scoring import available_scorers, get_scorer

METHODS = ["agentwrite", "compress", "longscope", "markov_cluster", "ral_writer", "rapid", "single"]

PLUGIN = """
from plugins_{n}.registry import REGISTRY
REGISTRY.add({name!r}, {name!r}.upper(), __name__)
"""


def _package(root: Path, n: int, modules: dict[str, str]) -> Registry[str]:
    """A package `plugins_<n>` under `root` holding a registry and `modules` (name -> the
    plug-in name it registers), on the import path."""
    package = root / f"plugins_{n}"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "registry.py").write_text(
        "from lilo.tasks.registry import Registry\n"
        f"REGISTRY = Registry('plugin', 'plugins_{n}', 'add plugins_{n}/{{name}}.py')\n"
    )
    for module, name in modules.items():
        (package / f"{module}.py").write_text(PLUGIN.format(n=n, name=name))
    sys.path.insert(0, str(root))
    importlib.invalidate_caches()
    return importlib.import_module(f"plugins_{n}.registry").REGISTRY


def test_discovery_imports_public_modules_once(tmp_path, monkeypatch):
    monkeypatch.setattr(sys, "path", list(sys.path))
    registry = _package(tmp_path, 1, {"alpha": "a", "_helper": "hidden", "base": "base"})
    assert registry.names() == ["a"]
    assert registry.get("a") == "A"
    (tmp_path / "plugins_1" / "beta.py").write_text(PLUGIN.format(n=1, name="b"))
    importlib.invalidate_caches()
    assert registry.names() == ["a"]  # the package was walked once, not on every lookup


def test_a_name_registered_by_two_modules_is_refused(tmp_path, monkeypatch):
    monkeypatch.setattr(sys, "path", list(sys.path))
    registry = _package(tmp_path, 2, {"one": "same", "two": "same"})
    with pytest.raises(LiloError, match=r"plugin 'same' is registered by plugins_2.one and "):
        registry.names()


def test_unknown_names_are_one_error_listing_the_known_ones(tmp_path):
    settings = load_settings(None, {"data_dir": str(tmp_path)})
    with pytest.raises(UnknownName) as method_error:
        get_method("nope", settings.generate, settings.llm, settings.embedding)
    with pytest.raises(UnknownName) as scorer_error:
        get_scorer("nope")
    assert str(method_error.value) == (
        f"unknown method 'nope': known are {', '.join(METHODS)}; "
        "add tasks/methods/nope.py with @method('nope', args=...)"
    )
    assert str(scorer_error.value) == (
        "unknown scorer 'nope': known are consistency, copy, length, quality; "
        "add tasks/scoring/nope.py with @scorer('nope')"
    )
    assert isinstance(method_error.value, InputError) and method_error.value.exit_code == 2
    for wrong, nearest in [("singel", "single"), ("ral_writr", "ral_writer"), ("Single", "single")]:
        with pytest.raises(UnknownName, match=rf"'{wrong}': did you mean '{nearest}'\? known"):
            get_method(wrong, settings.generate, settings.llm, settings.embedding)
    with pytest.raises(UnknownName, match="options go between"):
        get_method("single[x", settings.generate, settings.llm, settings.embedding)


def test_every_method_takes_typed_parameters_and_gets_them_all(tmp_path):
    settings = load_settings(None, {"data_dir": str(tmp_path)})
    assert [m for m in available_methods() if "[" not in m] == METHODS
    for name in METHODS:
        factory = getattr(importlib.import_module(f"lilo.tasks.methods.{name}"), name)
        parameters = inspect.signature(factory).parameters.values()
        assert all(p.kind is not p.VAR_KEYWORD for p in parameters), name
        assert all(p.annotation is not p.empty for p in parameters), name
        # a parameter with a default is one a run's id leaves out while it is at its default
        # (generate.plan_steps_cap 0, the position formula for a whole-number exponent)
        args = set(get_method(name, settings.generate, settings.llm, settings.embedding).args)
        assert {p.name for p in parameters if p.default is p.empty} <= args, name
        assert args <= {p.name for p in parameters}, name


def test_every_scorer_takes_one_context():
    assert available_scorers() == ["consistency", "copy", "length", "quality"]
    for name in available_scorers():
        parameters = list(inspect.signature(get_scorer(name)).parameters.values())
        assert [(p.name, p.annotation) for p in parameters] == [("ctx", "ScoreContext")], name
