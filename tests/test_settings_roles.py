"""Every setting's role (tasks/config.py `Role`) is what it does: each OUTPUT or SELECTS
setting changes the config hash, each PACING, SECRET or PLACE one does not; each OUTPUT
setting of the backbone (`llm`) or of generation (`generate`) changes some method's
generation id, so a changed setting never reuses an old summary."""

from __future__ import annotations

import json
import types
import typing
from pathlib import Path
from typing import Annotated, Any, Literal

import pytest
from pydantic import BaseModel, SecretStr, ValidationError

from lilo.tasks.config import (
    METHOD_SECTIONS,
    PACING,
    PLACE,
    ChatEndpointSettings,
    Role,
    Section,
    Settings,
    fields_of,
    walk_fields,
)
from lilo.tasks.config_loading import ParameterRefused, run_settings
from lilo.tasks.llm import make_client
from lilo.tasks.methods import Unit, available_methods, get_method
from lilo.tasks.prompt_packs import lilo_pack
from lilo.tasks.records import PaperText, Sample

BASE = Settings().with_overrides({"llm.offline.processes": 0, "judge.offline.processes": 0})
FIELDS = list(walk_fields(Settings))


def _field(dotted: str) -> Any:
    model: type[BaseModel] = Settings
    *parents, leaf = dotted.split(".")
    for part in parents:
        model = fields_of(model)[part].annotation  # type: ignore[assignment]
    return fields_of(model)[leaf]


def _candidates(dotted: str, value: Any) -> list[Any]:
    """Other values of the field's type, tried until one validates."""
    kind = _field(dotted).annotation
    options = [a for a in typing.get_args(kind) if a is not type(None)]
    if typing.get_origin(kind) is Literal or any(typing.get_origin(o) is Literal for o in options):
        literals = [x for o in [kind, *options] for x in typing.get_args(o) if isinstance(x, str)]
        return [x for x in literals if x != value]
    if isinstance(value, bool):
        return [not value]
    if isinstance(value, int):
        return [value + 1, value - 1]
    if isinstance(value, float):
        return [round(value + 0.1, 6), round(value - 0.1, 6), value * 2]
    if isinstance(value, Path):
        return [Path("/elsewhere")]
    if isinstance(value, tuple):
        return [("2301.00001",), ("single",), (4000,)]
    if isinstance(value, dict):  # a sweep (setting -> values) or prices (model -> price)
        return [{"generate.ral.k": (4, 8)}, {"m": {"input": 1.0, "output": 2.0}}]
    if value is None or isinstance(value, SecretStr):
        if SecretStr in options:
            return ["sk-walk"]
        return ["http://127.0.0.1:1/v1"]
    if isinstance(value, str) and isinstance(kind, type | types.UnionType):
        return [value + "-walk", "tcp://127.0.0.1:8786", "single"]
    raise AssertionError(f"{dotted}: no other value to try for {value!r}")


# Settings a field needs beside it to validate or to be used at all.
CONTEXT: dict[str, dict[str, Any]] = {
    "runner.dask_address": {"runner.kind": "dask"},
    "llm.backend": {"llm.base_url": "http://127.0.0.1:1/v1"},
    "generate.llmlingua_model": {"generate.compressor": "llmlingua2"},
    # Only an endpoint with a context window fits budgets to it: the offline engine has none.
    "llm.fit_max_tokens": {"llm.backend": "openai", "llm.base_url": "http://127.0.0.1:1/v1"},
    # What stands for an endpoint's address: the offline engine has none.
    "llm.weights": {"llm.backend": "openai", "llm.base_url": "http://127.0.0.1:1/v1"},
    # What the openai backend does with an empty reply: the offline engine never gives one.
    "llm.empty_reply": {"llm.backend": "openai", "llm.base_url": "http://127.0.0.1:1/v1"},
    # How an endpoint is asked (chat or completions): the offline engine reads messages.
    "llm.api": {"llm.backend": "openai", "llm.base_url": "http://127.0.0.1:1/v1"},
    # The two position formulas differ only for an exponent that is not a whole number.
    "generate.ral.position_formula": {"generate.ral.a": 2.5},
}
# Backbone settings no method reads: each method passes its own limit (generate.*_max_tokens).
NOT_READ_BY_METHODS = {"llm.max_tokens"}
# The papers' order is chosen where a unit is made (flows/_load.py, tests/test_paper_order.py):
# a generation's id holds its papers in the order it reads them.
ORDERED_WHERE_UNITS_ARE_MADE = {"generate.paper_order"}


def _changed(dotted: str) -> Settings:
    extra = CONTEXT.get(dotted, {})
    value = BASE.value_at(dotted)
    for candidate in _candidates(dotted, value):
        try:
            return BASE.with_overrides({dotted: candidate, **extra})
        except ValidationError:
            continue
    raise AssertionError(f"{dotted}: none of the tried values validates")


@pytest.mark.parametrize(("dotted", "role"), FIELDS, ids=[name for name, _ in FIELDS])
def test_each_setting_changes_the_config_hash_exactly_when_it_changes_results(dotted, role):
    changed = _changed(dotted)
    assert changed.value_at(dotted) != BASE.value_at(dotted)
    moved = changed.config_hash() != BASE.config_hash()
    assert moved == (role in (Role.OUTPUT, Role.SELECTS)), f"{dotted} is {role.value}"


def _generation_ids(settings: Settings) -> dict[str, str]:
    paper = PaperText("2601.00001", "T", "text", 1, 1, "main.tex", "1.1", "src", "content-a")
    sample = Sample("s1", "v1", ("2601.00001",), "Topic", "survey", 1, "command")
    unit, client, pack = Unit(sample, [paper], 4000), make_client(settings), lilo_pack()
    return {
        name: get_method(name, settings.generate, settings.llm, settings.embedding).generation_id(
            unit, client, pack
        )
        for name in available_methods()
    }


GENERATING = [
    n
    for n, r in FIELDS
    if r is Role.OUTPUT
    and n.split(".")[0] in ("llm", "generate")
    and n not in NOT_READ_BY_METHODS | ORDERED_WHERE_UNITS_ARE_MADE
]


@pytest.mark.parametrize("dotted", GENERATING)
def test_each_output_setting_of_generation_changes_a_generation_id(dotted, tmp_path):
    base = BASE.with_overrides({"data_dir": str(tmp_path), **CONTEXT.get(dotted, {})})
    changed = _changed(dotted).with_overrides({"data_dir": str(tmp_path)})
    before, after = _generation_ids(base), _generation_ids(changed)
    assert any(before[m] != after[m] for m in before), f"{dotted} changes no generation id"


def test_the_walk_sees_every_section_and_role():
    names = {n for n, _ in FIELDS}
    assert {"llm.api_key", "judge.api_key", "embedding.api_key", "runner.batch_units"} <= names
    assert {r for _, r in FIELDS} == set(Role)
    assert len(GENERATING) > 40
    assert {"generate.ral.k", "generate.markov.top_k", "generate.longscope.preset"} <= names


def test_a_method_section_s_roles_apply_as_anywhere(monkeypatch):
    """A method's own section (registered in its file, not declared in tasks/config.py):
    a PACING setting of it is out of the config hash, a PLACE one refused from a run's
    parameters, an OUTPUT one hashed."""

    class Probing(Section):
        depth: int = 1
        speed: Annotated[int, PACING] = 2
        folder: Annotated[str, PLACE] = "here"

    monkeypatch.setattr(METHOD_SECTIONS, "_entries", dict(METHOD_SECTIONS._entries))
    METHOD_SECTIONS.add("probing", Probing, __name__)
    roles = dict(walk_fields(Settings))
    assert [roles[f"generate.probing.{n}"] for n in ("depth", "speed", "folder")] == [
        Role.OUTPUT,
        Role.PACING,
        Role.PLACE,
    ]
    base = Settings()
    assert base.with_overrides({"generate.probing.speed": 5}).config_hash() == base.config_hash()
    assert base.with_overrides({"generate.probing.depth": 5}).config_hash() != base.config_hash()
    with pytest.raises(ParameterRefused, match="may not set generate.probing.folder"):
        run_settings({"generate.probing.folder": "/elsewhere"})


UNHASHED = [
    n
    for n, r in FIELDS
    if r in (Role.PACING, Role.SECRET, Role.PLACE) and n.split(".")[0] in ("llm", "generate")
]


@pytest.mark.parametrize("dotted", UNHASHED)
def test_each_pacing_secret_or_place_setting_of_generation_keeps_every_generation_id(
    dotted, tmp_path
):
    base = BASE.with_overrides({"data_dir": str(tmp_path)})
    changed = _changed(dotted).with_overrides({"data_dir": str(tmp_path)})
    assert _generation_ids(changed) == _generation_ids(base)


@pytest.mark.parametrize("name", [n for n, _ in walk_fields(ChatEndpointSettings)])
def test_the_judge_gets_every_endpoint_setting_it_shares_with_the_backbone(name):
    from lilo.tasks.llm import judge_settings

    judge = {"judge.backend": "offline", "judge.model": "grader"}
    base = BASE.with_overrides(judge)
    value = base.value_at(f"judge.{name}")
    for candidate in _candidates(f"judge.{name}", value):
        try:
            changed = base.with_overrides({f"judge.{name}": candidate})
            break
        except ValidationError:
            continue
    assert judge_settings(changed).value_at(f"llm.{name}") == changed.value_at(f"judge.{name}")
    assert judge_settings(changed).value_at(f"llm.{name}") != judge_settings(base).value_at(
        f"llm.{name}"
    )


def test_the_settings_no_method_reads_are_the_clients_own_defaults(tmp_path):
    """`llm.max_tokens` is what a call that names no limit is sent with (QA, judges)."""
    assert NOT_READ_BY_METHODS == {"llm.max_tokens"}
    settings = BASE.with_overrides({"data_dir": str(tmp_path), "llm.max_tokens": 123})
    client = make_client(settings)
    task = lilo_pack().render("task", papers=["A paper about kernels."], length=100)
    client.chat([{"role": "user", "content": task}], purpose="walk")
    (call,) = client.take_calls()
    assert json.loads(call.request)["max_tokens"] == 123


@pytest.mark.parametrize(
    ("given", "refused"),
    [
        ({"runner.kind": "dask", "runner.dask_workers": 1_000_000}, "runner.dask_workers=1000000"),
        ({"llm.max_reply_bytes": 1e15}, "llm.max_reply_bytes=1000000000000000"),
        ({"llm.timeout_s": 1e15}, "llm.timeout_s=1000000000000000.0"),
        ({"llm.retries": 1e9}, "llm.retries=1000000000"),
    ],
)
def test_a_run_parameter_may_lower_a_bound_never_raise_it(given, refused):
    with pytest.raises(ParameterRefused, match=f"not raise them: {refused} \\(the worker's: "):
        run_settings(given)
    lowered = run_settings({"llm.retries": 1, "llm.timeout_s": 5, "runner.dask_workers": 1})
    assert (lowered.llm.retries, lowered.llm.timeout_s, lowered.runner.dask_workers) == (1, 5, 1)


@pytest.mark.parametrize("name", ["embedding.model", "generate.llmlingua_model"])
def test_a_model_is_a_place_no_run_parameter_names(name):
    with pytest.raises(ParameterRefused, match=f"may not set {name}:"):
        run_settings({name: "/home/someone/private-model"})


@pytest.mark.parametrize(
    ("key", "near"),
    [
        ("LLM.BASE_URL", "llm.base_url"),
        ("Data_Dir", "data_dir"),
        ("RUNNER.DASK_ADDRESS", "runner.dask_address"),
        ("data-dir", "data_dir"),
        ("llm.modle", "llm.model"),
    ],
)
def test_an_unknown_or_miscased_parameter_is_refused_with_the_nearest_name(key, near):
    with pytest.raises(
        ParameterRefused, match=rf"{key} is not a setting \(did you mean {near}\?\)"
    ):
        run_settings({key: "x"})
