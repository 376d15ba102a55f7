"""A probe task is one file (docs/contributing.md): a task written as one module into
tasks/probes/kinds/ the way a contributor adds one is a `lilo probe` command with its own
options, runs end to end through the real flow (the offline engine answering), and lands in
the probe views and the report page like kv and mdqa.

The file goes into a temporary folder on the package's search path (`__path__`, which the
registry walks as it walks the package's own folder), so the working tree is never written."""

from __future__ import annotations

import importlib
import sys
from dataclasses import replace
from pathlib import Path

import duckdb
import pytest

import lilo.tasks.probes.kinds as kinds_package
from lilo.flows import doc_tables
from lilo.flows.cli import main
from lilo.tasks.config import PROBE_SECTIONS, Section
from lilo.tasks.config_loading import ConfigError, load_settings
from lilo.tasks.errors import LiloError
from lilo.tasks.probes import Flag, ProbeTask, available_probe_tasks, default_positions, probe_task
from lilo.tasks.probes.kinds.base import _TASKS

NEEDLE = '''"""Needle: one note holding a number among notes without one; asked: the number."""

from __future__ import annotations

from typing import Annotated

from pydantic import Field

from lilo.tasks.config import Section
from lilo.tasks.probes.kinds.base import Flag, ProbeTask, probe_task
from lilo.tasks.probes.placement import place_gold
from lilo.tasks.probe_records import ProbeItem


class NeedleSettings(Section):
    notes: tuple[Annotated[int, Field(ge=2)], ...] = Field((8,), min_length=1)
    number_from: int = 1000


def _make(wanted, cfg, inputs, embed):
    items = []
    for size in wanted:
        probe_set = f"lilo/needle-{size}"
        notes = tuple(
            {"title": f"Note {i}", "text": f"Note {i} is about the weather."}
            for i in range(size - 1)
        )
        for n in range(cfg.examples):
            number = cfg.section("needle").number_from + n
            gold = {"title": "Secret", "text": f"The secret number is {number}."}
            question = "What is the secret number?"
            items.append(
                ProbeItem(
                    f"{probe_set}/{n}", probe_set, "needle", size, n, "lilo", question,
                    (str(number),), notes, gold,
                )
            )
    return items, []


def _prompt(unit, prompts):
    documents = place_gold(list(unit.item.context), unit.item.gold, unit.position or 0)
    return prompts.qa(unit.item.question, documents, unit.query_aware)


probe_task(
    ProbeTask(
        "needle",
        title="secret-number needle",
        unit="notes",
        sizes=Flag("needle.notes", "--notes", "notes per prompt"),
        sources=("auto", "published", "lilo"),
        source_help="else lilo-made notes",
        make=_make,
        prompt=_prompt,
        grade=lambda prediction, item: item.answers[0] in prediction,
        settings=NeedleSettings,
    ),
    __name__,
)
'''


@pytest.fixture
def needle(tmp_path, monkeypatch):
    """`needle.py` in the probe tasks' folder, found afresh."""
    available_probe_tasks()  # the shipped tasks, found first
    folder = tmp_path / "plugins" / kinds_package.__name__
    folder.mkdir(parents=True)
    (folder / "needle.py").write_text(NEEDLE)
    monkeypatch.setattr(kinds_package, "__path__", [*kinds_package.__path__, str(folder)])
    for registry in (_TASKS, PROBE_SECTIONS):
        monkeypatch.setattr(registry, "_entries", dict(registry._entries))
        monkeypatch.setattr(registry, "_discovered", False)
    importlib.invalidate_caches()
    yield
    sys.modules.pop(f"{kinds_package.__name__}.needle", None)


def test_a_probe_task_is_one_file(needle, tmp_path, capsys, prefect_harness):
    assert available_probe_tasks() == ["kv", "mdqa", "needle"]
    assert main(["probe", "--help"]) == 0
    assert "secret-number needle" in " ".join(capsys.readouterr().out.split())
    assert main(["probe", "needle", "--help"]) == 0
    help_text = capsys.readouterr().out
    assert "--notes NOTES" in help_text and "--keys" not in help_text
    assert "--source {auto,published,lilo}" in help_text

    data = tmp_path / "data"
    run = ["probe", "needle", "--notes", "4", "--examples", "2", "--data-dir", str(data)]
    assert main([*run, "--set", "llm.offline.middle_neglect=0"]) == 0
    assert "needle probe on offline:" in " ".join(capsys.readouterr().out.split())
    con = duckdb.connect(str(data / "published" / "lilo.duckdb"), read_only=True)
    try:
        curve = con.execute(
            "SELECT size, position, accuracy, n FROM probe_curve WHERE task = 'needle' "
            "ORDER BY position"
        ).fetchall()
    finally:
        con.close()
    assert default_positions("needle", 4) == (0, 1, 2, 3)
    assert curve == [(4, p, 1.0, 2) for p in (0, 1, 2, 3)]
    page = next((data / "published" / "probes").rglob("report.html")).read_text()
    assert "needle" in page

    # Its own settings, in the docs' generated table of settings.
    tables = doc_tables.render(
        (Path(__file__).resolve().parent.parent / "docs" / "catalog.md").read_text()
    )
    assert "| `probe.needle.notes` | `[8]` | output |" in tables


def test_a_probe_task_s_own_settings_are_set_as_every_setting_is(needle, tmp_path, monkeypatch):
    """`[probe.needle]` in a config file, LILO_PROBE__NEEDLE__*, an override; a key or a
    section the task does not have is refused, saying which and where."""
    available_probe_tasks()  # finds needle.py
    config = tmp_path / "lilo.toml"
    config.write_text("[probe.needle]\nnotes = [5, 6]\n")
    assert load_settings(config).probe.section("needle").notes == (5, 6)
    assert load_settings().probe.needle.model_dump() == {"notes": (8,), "number_from": 1000}
    monkeypatch.setenv("LILO_PROBE__NEEDLE__NUMBER_FROM", "7")
    assert load_settings(config).probe.needle.number_from == 7
    assert load_settings(config, {"probe.needle.notes": [3]}).probe.needle.notes == (3,)
    monkeypatch.delenv("LILO_PROBE__NEEDLE__NUMBER_FROM")
    config.write_text("[probe.needle]\nnumber_from = 'x'\n\n[probe.needel]\nnotes = [5]\n")
    with pytest.raises(ConfigError) as refused:
        load_settings(config)
    assert str(refused.value) == (
        f"{config}:2: probe.needle.number_from: Input should be a valid integer, unable to "
        f"parse string as an integer; "
        f"{config}:4: probe.needel: Extra inputs are not permitted"
    )


class Notes(Section):
    notes: tuple[int, ...] = (4,)


def test_a_probe_task_naming_a_setting_that_is_not_there_is_refused():
    task = ProbeTask(
        "misnamed",
        title="misnamed",
        unit="notes",
        sizes=Flag("notes", "--notes", "notes per prompt"),
        sources=("auto", "published", "somewhere"),
        source_help="",
        make=lambda *a: ([], []),
        prompt=lambda unit, prompts: "",
        grade=lambda prediction, item: False,
    )
    with pytest.raises(LiloError, match="names notes, somewhere: not a `probe` setting"):
        probe_task(task, "test")
    assert "misnamed" not in available_probe_tasks()
    # A setting of its own section is named with the task's name in front.
    with pytest.raises(LiloError, match="names notes: not a `probe` setting"):
        probe_task(replace(task, sources=("auto",), settings=Notes), "test")
    # Its section may not take the name of a setting every task has.
    clash = replace(task, name="examples", sizes=Flag("kv_keys", "--keys", ""), sources=("auto",))
    with pytest.raises(LiloError, match="probe.examples is a setting of every probe task"):
        probe_task(replace(clash, settings=Notes), "test")
    assert "misnamed" not in available_probe_tasks()
