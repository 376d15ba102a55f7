"""A plug-in is one file (docs/contributing.md), for the two kinds tests/test_plugin_files.py
does not write: an offline reply and a dataset importer. Each file goes into a temporary
folder on its package's search path (`__path__`, which the registry walks as it walks the
package's own folder), so the working tree is never written: a reply in the engine's folder,
a method that carries its own reply in the methods' folder, and an importer in
flows/importers/, then found and run."""

from __future__ import annotations

import importlib
import sys
from pathlib import Path
from types import ModuleType

import duckdb
import pytest

import lilo.flows.importers as importers_package
import lilo.tasks.llm.offline as offline_package
import lilo.tasks.methods as methods_package
import lilo.tasks.probes.kinds as probe_kinds_package
from lilo.flows.cli import main
from lilo.flows.importers.base import _IMPORTERS, available_importers
from lilo.tasks.config import OfflineSettings
from lilo.tasks.errors import InputError
from lilo.tasks.llm.offline import OfflineEngine, reply
from lilo.tasks.llm.offline.base import _REPLIES, offline_replies
from lilo.tasks.methods import available_methods
from lilo.tasks.methods.base import _METHODS
from lilo.tasks.methods.markov_cluster import SUMMARY_SIGNATURE
from lilo.tasks.probes import available_probe_tasks
from lilo.tasks.probes.kinds.base import _TASKS
from lilo.tasks.registry import Registry

REPLY = '''"""Echo: the engine says back what follows "Say it back:"."""

from lilo.tasks.config import OfflineSettings
from lilo.tasks.llm.offline.base import offline_reply
from lilo.tasks.llm.types import Message


def matches(prompt: str) -> bool:
    return "Say it back:" in prompt


@offline_reply("echo", matches=matches)
def respond(messages: list[Message], offline: OfflineSettings) -> str:
    return messages[-1]["content"].split("Say it back:")[1].strip()
'''

METHOD = '''"""Title: the first paper's first line, as the model restates it."""

from lilo.tasks.config import OfflineSettings, Settings
from lilo.tasks.llm.offline.base import offline_reply
from lilo.tasks.llm.types import Message
from lilo.tasks.methods.base import Draft, Run, Writer, method

ASK = "Restate this title in capitals:"


@method("title", args=lambda settings: {})
def title() -> Writer:
    def write(run: Run) -> Draft:
        first = run.papers[0].text.splitlines()[0]
        return Draft(run.chat(f"{ASK} {first}", "title", temperature=0.0, max_tokens=50))

    return write


@offline_reply("title", matches=lambda prompt: ASK in prompt)
def restated(messages: list[Message], offline: OfflineSettings) -> str:
    return messages[-1]["content"].split(ASK)[1].strip().upper()
'''

IMPORTER = '''"""`lilo import notes FOLDER`: a folder of Markdown notes, each an asset of dataset
`notes`; a file that is not UTF-8 is a problem, named in one line."""

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from prefect import flow

from lilo.flows._run import recorded_run
from lilo.flows._stage import stage
from lilo.flows.importers.base import Importer, importer, print_import_outcome
from lilo.tasks.config import Settings
from lilo.tasks.errors import InputError
from lilo.tasks.probe_records import content_sha256
from lilo.tasks.records import Quarantine


@dataclass
class Notes:
    assets: list[dict] = field(default_factory=list)
    problems: list[Quarantine] = field(default_factory=list)
    rows_added: dict[str, int] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    run_id: str = ""


def check(path: Path, options: Mapping[str, str]) -> Path:
    if not path.is_dir():
        raise InputError(f"{path} is not a folder: give a folder of .md notes")
    return path


def read(path: Path) -> Notes:
    out = Notes()
    for file in sorted(path.glob("*.md")):
        try:
            text = file.read_text(encoding="utf-8")
        except UnicodeDecodeError:
            why = f"{file.name}: not UTF-8"
            out.problems.append(Quarantine(f"notes/{file.name}", "import", "note", why))
            continue
        row = {"dataset_version": "notes", "name": file.stem, "content": text}
        out.assets.append({**row, "source": file.name, "sha256": content_sha256(text)})
    return out


@flow(name="import-notes")
def import_notes_flow(path: str, settings: Settings) -> Notes:
    notes = read(Path(path))
    with recorded_run(settings, "import-notes") as run:
        with stage("import", settings, run.run_id) as (report, wh):
            with wh.transaction():
                report.write(wh, "dim_dataset_assets", notes.assets, ("dataset_version", "name"))
                report.write(wh, "quarantine", notes.problems, ("item_id", "stage"), update=True)
        run.add(report)
    notes.rows_added, notes.run_id = dict(report.rows_added), run.run_id
    return notes


def report(notes: Notes, path: Path) -> int:
    print(f"notes at {path} (run {notes.run_id}): {len(notes.assets)} read")
    notes.problems = [q.detail for q in notes.problems]
    print_import_outcome(notes)
    return 0 if notes.assets else 1


importer(
    Importer(
        "notes",
        title="a folder of Markdown notes",
        description="Each .md file of FOLDER becomes an asset of dataset notes.",
        reads="FOLDER",
        reads_help="a folder of .md files",
        check=check,
        run=lambda path, settings, options: import_notes_flow(str(path), settings),
        report=report,
    ),
    __name__,
)
'''


PROBE_TASK = '''"""Odd one out: which word is not a colour, asked in the task's own words."""

from lilo.tasks.config import OfflineSettings
from lilo.tasks.llm.offline.base import offline_reply
from lilo.tasks.llm.types import Message
from lilo.tasks.probes.kinds.base import Flag, ProbeTask, probe_task

ASK = "Which of these words is not a colour?"


def _prompt(unit, prompts):
    return f"{ASK}\\n" + "\\n".join(d["text"] for d in unit.item.context)


probe_task(
    ProbeTask(
        "odd_one",
        title="odd one out",
        unit="words",
        sizes=Flag("kv_keys", "--words", "words per prompt"),
        sources=("auto", "published", "lilo"),
        source_help="else lilo-made words",
        make=lambda *args: ([], []),
        prompt=_prompt,
        grade=lambda prediction, item: item.answers[0] in prediction,
    ),
    __name__,
)


@offline_reply("odd_one", matches=lambda prompt: ASK in prompt)
def respond(messages: list[Message], offline: OfflineSettings) -> str:
    colours = {"red", "green", "blue"}
    words = messages[-1]["content"].split("\\n")[1:]
    return next(word for word in words if word not in colours)
'''


def _add_file(
    monkeypatch, tmp_path: Path, package: ModuleType, registry: Registry, name: str, text: str
) -> str:
    """`name`.py holding `text` on `package`'s search path, `registry` found afresh (and
    restored after the test)."""
    folder = tmp_path / "plugins" / package.__name__
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"{name}.py").write_text(text)
    monkeypatch.setattr(package, "__path__", [*package.__path__, str(folder)])
    monkeypatch.setattr(registry, "_entries", dict(registry._entries))
    monkeypatch.setattr(registry, "_discovered", False)
    importlib.invalidate_caches()
    return f"{package.__name__}.{name}"


@pytest.fixture
def added(monkeypatch):
    """The modules a test adds, forgotten after it."""
    offline_replies(), available_methods(), available_importers()  # the shipped ones first
    for registry in (_REPLIES, _METHODS, _IMPORTERS):
        monkeypatch.setattr(registry, "_entries", dict(registry._entries))
    modules: list[str] = []
    yield modules
    for module in modules:
        sys.modules.pop(module, None)


def _ask(text: str) -> str:
    return reply([{"role": "user", "content": text}], OfflineSettings()).text


def test_an_offline_reply_is_one_file(added, monkeypatch, tmp_path):
    with pytest.raises(InputError, match=r"register a reply for it with @offline_reply"):
        _ask("Say it back: hello")
    added.append(_add_file(monkeypatch, tmp_path, offline_package, _REPLIES, "echo", REPLY))
    assert _ask("Say it back: hello") == "hello"
    assert [r.name for r in offline_replies()][-1] == "write"  # still the last resort


def test_a_planner_prompt_that_states_no_length_is_lilo_s_line_for_the_offline_engine():
    """A benchmark's planner template without "about N words": the offline engine says what
    to change, as lilo's InputError, not a ValueError."""
    with pytest.raises(InputError, match=r"state it in the pack's task template"):
        _ask("<instruction>Summarise the papers.</instruction>")


def test_a_method_carries_its_own_offline_reply(added, monkeypatch, tmp_path):
    module = _add_file(monkeypatch, tmp_path, methods_package, _REPLIES, "title", METHOD)
    added.append(module)
    monkeypatch.setattr(_METHODS, "_discovered", False)
    assert _ask("Restate this title in capitals: a survey") == "A SURVEY"
    assert "title" in available_methods()
    assert module in {origin for _, origin in _REPLIES._entries.values()}


def test_a_probe_task_carries_its_own_offline_reply(added, monkeypatch, tmp_path):
    available_probe_tasks()
    monkeypatch.setattr(_TASKS, "_entries", dict(_TASKS._entries))
    module = _add_file(monkeypatch, tmp_path, probe_kinds_package, _REPLIES, "odd_one", PROBE_TASK)
    added.append(module)
    monkeypatch.setattr(_TASKS, "_discovered", False)
    assert _ask("Which of these words is not a colour?\nred\ntable\nblue") == "table"
    assert "odd_one" in available_probe_tasks()
    assert module in {origin for _, origin in _REPLIES._entries.values()}


def test_the_engines_worker_processes_find_a_methods_reply():
    """Markov-cluster's cluster summary is in its method's file: a worker process, which
    imports nothing of lilo's methods until it is asked, answers it as this process does."""
    messages = [
        {
            "role": "user",
            "content": f"{SUMMARY_SIGNATURE} in at most 30 words.\n<paper_1>\nTransformers "
            "attend over tokens. Attention costs grow with length.\n</paper_1>",
        }
    ]
    in_thread = OfflineEngine("m", OfflineSettings(processes=0))
    in_worker = OfflineEngine("m", OfflineSettings(processes=1))
    kwargs = {"temperature": 0.0, "max_tokens": None}
    expected = in_thread.complete(messages, **kwargs).text
    assert expected.startswith("## ")
    assert in_worker.complete(messages, **kwargs).text == expected


def test_an_importer_is_one_file(added, monkeypatch, tmp_path, capsys, prefect_harness):
    added.append(_add_file(monkeypatch, tmp_path, importers_package, _IMPORTERS, "notes", IMPORTER))
    folder = tmp_path / "folder"
    folder.mkdir()
    (folder / "first.md").write_text("# First\nA note.")
    (folder / "broken.md").write_bytes(b"\xff\xfe not text")
    data = tmp_path / "data"

    # Listed in `lilo import --help` and in the error for a misspelt name.
    assert main(["import", "--help"]) == 0
    assert "a folder of Markdown notes" in " ".join(capsys.readouterr().out.split())
    assert main(["import"]) == 2  # no name: the known ones, in one line
    assert "known are longinoutbench, lost-in-the-middle, notes;" in capsys.readouterr().err
    assert main(["import", "ntoes", str(folder)]) == 2
    assert "'longinoutbench', 'lost-in-the-middle', 'notes'" in capsys.readouterr().err
    # Its check before any flow: a missing folder is one line, exit 2.
    assert main(["import", "notes", str(tmp_path / "nope"), "--data-dir", str(data)]) == 2
    assert "is not a folder: give a folder of .md notes" in capsys.readouterr().err

    assert main(["import", "notes", str(folder), "--data-dir", str(data)]) == 0
    out = capsys.readouterr().out
    assert "1 read" in out and "broken.md: not UTF-8" in out and "rows added: 2" in out
    con = duckdb.connect(str(data / "lilo.duckdb"), read_only=True)
    try:
        rows = con.execute(
            "SELECT name, content FROM dim_dataset_assets WHERE dataset_version = 'notes'"
        ).fetchall()
    finally:
        con.close()
    assert rows == [("first", "# First\nA note.")]
    # A second import adds nothing.
    assert main(["import", "notes", str(folder), "--data-dir", str(data)]) == 0
    assert "rows added: 0: nothing new" in capsys.readouterr().out
