"""`lilo clean PATH`: a source folder or an e-print archive in, the cleaned text out; a
quarantined input exits non-zero with one line on stderr; nothing is written but temp files."""

from __future__ import annotations

import io
import json
import subprocess
import sys
import tarfile
import threading
from pathlib import Path

import pytest
from conftest import PAPERS

from lilo.flows.cli import main


@pytest.fixture
def quiet_dirs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, Path]:
    """An empty working folder and an empty TMPDIR, to check nothing is left in either. An
    earlier test's pipeline command may still be loading the embedding model on its warm-up
    thread (flows/cli/_prefect.py), which writes under the temp dir: it finishes first."""
    for thread in threading.enumerate():
        if thread.name == "warm-up":
            thread.join()
    cwd, tmp = tmp_path / "cwd", tmp_path / "tmp"
    cwd.mkdir()
    tmp.mkdir()
    monkeypatch.chdir(cwd)
    monkeypatch.setenv("TMPDIR", str(tmp))
    monkeypatch.setattr("tempfile.tempdir", None)
    return cwd, tmp


def test_folder_json(quiet_dirs: tuple[Path, Path], capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["clean", str(PAPERS / "llm-stylometry"), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert {"main_file", "words", "warnings", "removed", "text"} <= set(out)
    assert out["main_file"] == "main.tex" and out["words"] > 3800 and out["warnings"] == []
    assert out["removed"]["appendix"] > 0 and "\\section" in out["text"]
    assert [p for d in quiet_dirs for p in d.iterdir()] == []


def test_archive_text_and_warnings(
    quiet_dirs: tuple[Path, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    archive = tmp_path / "1703.09710.tar.gz"
    with tarfile.open(archive, "w:gz") as tar:
        tar.add(PAPERS / "celerite-scalable-gp", arcname=".")
    assert main(["clean", str(archive)]) == 0
    captured = capsys.readouterr()
    assert captured.out.startswith("\\begin{abstract}")
    assert "\\documentclass" not in captured.out
    assert captured.err == "warning: missing input: vc.tex\n"
    assert [p for d in quiet_dirs for p in d.iterdir()] == []


@pytest.mark.e2e  # `lilo clean` in a subprocess
@pytest.mark.slow
@pytest.mark.parametrize(
    ("content", "reason"),
    [
        (b"%PDF-1.5\nno source\n", "no_latex_source"),
        (None, "unsafe_archive"),
        (b"\\documentclass{article}\\begin{document}Too short.\\end{document}", "too_short"),
    ],
    ids=["pdf", "dotdot", "short"],
)
def test_quarantined_input_exits_non_zero(
    quiet_dirs: tuple[Path, Path], tmp_path: Path, content: bytes | None, reason: str
) -> None:
    archive = tmp_path / "paper"
    if content is None:
        buffer = io.BytesIO(b"evil")
        with tarfile.open(archive, "w:gz") as tar:
            info = tarfile.TarInfo("../evil.tex")
            info.size = 4
            tar.addfile(info, buffer)
    else:
        archive.write_bytes(content)
    done = subprocess.run(
        [sys.executable, "-m", "lilo.flows.cli", "clean", str(archive)],
        capture_output=True,
        text=True,
        cwd=Path(__file__).resolve().parents[1],
        env={"TMPDIR": str(quiet_dirs[1]), "PATH": "/usr/bin:/bin"},
        check=False,
    )
    assert done.returncode == 1 and done.stdout == ""
    assert done.stderr.count("\n") == 1
    assert done.stderr.startswith(f"quarantined {archive}: {reason}: ")
    assert not (tmp_path / "evil.tex").exists()
    assert [p for d in quiet_dirs for p in d.iterdir()] == []


def test_missing_path(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["clean", "/nowhere/at/all"]) == 2
    assert "does not exist" in capsys.readouterr().err
