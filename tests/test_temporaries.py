"""lilo removes only what it provably made: its temporaries live in the data dir's `tmp/`,
named with their owner (machine, boot and pid namespace, pid, start time), and the sweep at
a run's start removes one only when that owner is provably gone; nothing else anywhere is
deleted, and a folder that is not lilo's is refused as a data dir before anything is
written there."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from lilo.flows._run import recorded_run
from lilo.flows.cli import main
from lilo.tasks.config import Settings
from lilo.tasks.files import temp_dir, temp_path

# What a user keeps in a folder, named as lilo once named its temporaries.
USER_FILES = (
    ".notes.2024.tmp",
    "projects/thesis/.chapter1.31337.tmp",
    "projects/.db.4242.tmp.wal",
    ".backup.98765.tmp/photos/cat.jpg",
    "essay.txt",
)


def _user_folder(root: Path) -> Path:
    for name in USER_FILES:
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(name)
    return root


def _tree(root: Path) -> list[str]:
    return sorted(p.relative_to(root).as_posix() for p in root.rglob("*"))


def _dead_pid() -> int:
    process = subprocess.Popen([sys.executable, "-c", "pass"])
    process.wait()
    return process.pid


def test_a_folder_that_is_not_lilo_s_is_refused_as_a_data_dir(tmp_path, capsys):
    home = _user_folder(tmp_path / "home")
    before = _tree(home)
    assert main(["demo", "--data-dir", str(home)]) == 2
    error = capsys.readouterr().err.strip()
    assert error == (
        f"lilo: {home} holds files lilo did not make (.backup.98765.tmp, .notes.2024.tmp, "
        "essay.txt and 1 more): give --data-dir (LILO_DATA_DIR) a new or empty folder, or the "
        "one that holds lilo.duckdb"
    )
    assert _tree(home) == before  # nothing removed, nothing written


def test_the_sweep_removes_only_temporaries_whose_owner_is_gone(tmp_path):
    data = tmp_path / "data"
    with recorded_run(Settings(data_dir=data), "first"):
        pass
    _user_folder(data)  # the user's files in lilo's data dir: never lilo's to remove
    _user_folder(data / "published")
    tmp = data / "tmp"
    (tmp / ".notes.2024.tmp").write_text("no owner mark")
    mine = temp_path(data, "live")  # this process's: it runs
    mine.mkdir()
    owner = mine.name.split(".")[-2]  # lilo-<machine>-<pid>-<start>
    _, machine, pid, started = owner.split("-")
    dead = _dead_pid()
    killed = f".killed.1.lilo-{machine}-{dead}-{started}.tmp"
    gone = {
        killed: "a killed process's folder",
        f"{killed}.wal": "a killed process's DuckDB log",
        f".reused.2.lilo-{machine}-{pid}-{int(started) - 1}.tmp": "its pid now another's",
    }
    kept = {
        mine.name: "this process's",
        ".notes.2024.tmp": "no owner mark",
        f".elsewhere.3.lilo-{'0' * 12}-{dead}-{started}.tmp": "another machine's or namespace's",
    }
    for name in (gone.keys() | kept.keys()) - {mine.name, killed}:
        (tmp / name).write_text("")
    (tmp / killed).mkdir()  # a killed `lilo clean`'s folder, with what it unpacked
    (tmp / killed / "main.tex").write_text("\\section{A}")
    before = _tree(data)

    with recorded_run(Settings(data_dir=data), "next"):
        pass
    assert sorted(p.name for p in tmp.iterdir()) == sorted(kept)
    removed = set(before) - set(_tree(data))
    assert removed == {f"tmp/{n}" for n in gone} | {f"tmp/{killed}/main.tex"}


@pytest.mark.e2e  # a lilo run in a subprocess in its own pid namespace
@pytest.mark.slow
@pytest.mark.skipif(shutil.which("unshare") is None, reason="needs unshare (util-linux)")
def test_a_lilo_in_another_pid_namespace_keeps_a_live_temporary(tmp_path):
    """A second lilo sharing the data dir from another pid namespace (a container) cannot
    see the first one's process: it keeps the first one's live temporaries."""
    data = tmp_path / "data"
    probe = subprocess.run(["unshare", "-Urpf", "--mount-proc", "true"], capture_output=True)
    if probe.returncode != 0:
        pytest.skip(f"no user and pid namespaces here: {probe.stderr.decode().strip()}")
    second = (
        "import sys; from pathlib import Path; from lilo.flows._run import recorded_run; "
        "from lilo.tasks.config import Settings\n"
        "with recorded_run(Settings(data_dir=Path(sys.argv[1])), 'second'): pass"
    )
    with temp_dir(data, "clean") as live:
        (Path(live) / "main.tex").write_text("being cleaned")
        run = subprocess.run(
            ["unshare", "-Urpf", "--mount-proc", sys.executable, "-c", second, str(data)],
            capture_output=True,
            text=True,
            env={**os.environ, "PREFECT_LOGGING_LEVEL": "WARNING"},
        )
        assert run.returncode == 0, run.stderr
        assert (Path(live) / "main.tex").read_text() == "being cleaned"
