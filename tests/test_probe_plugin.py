"""A probe task is one file (docs/contributing.md): a task written as one module into
tasks/probes/kinds/ the way a contributor adds one is a `lilo probe` command with its own
options, runs end to end through the real flow (the offline engine answering), and lands in
the probe views and the report page like kv and mdqa.

The file goes into a temporary folder on the package's search path (`__path__`, which the
registry walks as it walks the package's own folder), so the working tree is never written."""

from __future__ import annotations

import importlib
import sys

import duckdb
import pytest

import lilo.tasks.probes.kinds as kinds_package
from lilo.flows.cli import main
from lilo.tasks.probes import available_probe_tasks, default_positions
from lilo.tasks.probes.kinds.base import _TASKS

NEEDLE = '''"""Needle: one note holding a number among notes without one; asked: the number."""

from __future__ import annotations

from lilo.tasks.probes.kinds.base import Flag, ProbeTask, probe_task
from lilo.tasks.probes.placement import place_gold
from lilo.tasks.probes.records import ProbeItem


def _make(wanted, cfg, inputs, embed):
    items = []
    for size in wanted:
        probe_set = f"lilo/needle-{size}"
        notes = tuple(
            {"title": f"Note {i}", "text": f"Note {i} is about the weather."}
            for i in range(size - 1)
        )
        for n in range(cfg.examples):
            gold = {"title": "Secret", "text": f"The secret number is {1000 + n}."}
            question = "What is the secret number?"
            items.append(
                ProbeItem(
                    f"{probe_set}/{n}", probe_set, "needle", size, n, "lilo", question,
                    (str(1000 + n),), notes, gold,
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
        sizes=Flag("kv_keys", "--notes", "notes per prompt"),
        sources=("auto", "published", "lilo"),
        source_help="else lilo-made notes",
        make=_make,
        prompt=_prompt,
        grade=lambda prediction, item: item.answers[0] in prediction,
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
    monkeypatch.setattr(_TASKS, "_entries", dict(_TASKS._entries))
    monkeypatch.setattr(_TASKS, "_discovered", False)
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


def test_a_probe_task_naming_a_setting_that_is_not_there_is_refused():
    from lilo.tasks.errors import LiloError
    from lilo.tasks.probes import Flag, ProbeTask, probe_task

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
