"""Hostile inputs, built here as an attacker would: LaTeX that fans out, grows quadratically
or explodes through macros; quotes in every path and name; an endpoint that echoes the API
key; leftovers after a kill; host-file probes; unbounded readers. Each case runs in a child
process whose time and peak memory (RUSAGE_CHILDREN of a waiting wrapper: its own process
tree only) are bounded."""

from __future__ import annotations

import json
import subprocess
import sys
import tarfile
import time
from pathlib import Path

import pytest
from conftest import PAPERS

from flows._load import load_papers
from flows.clean import clean_flow
from tasks.config import Settings
from tasks.parallel import map_processes
from tasks.records import RawSource
from warehouse import Warehouse

LILO = [sys.executable, "-m", "flows.cli"]
MAX_SECONDS = 30.0
MAX_MB = 1024.0
PREAMBLE = "\\documentclass{article}\n\\begin{document}\n"
END = "\n\\end{document}\n"
# Runs argv and reports its wall time and the peak RSS of its process tree.
_MEASURE = """
import json, resource, subprocess, sys, time
start = time.perf_counter()
done = subprocess.run(sys.argv[1:], capture_output=True, text=True, timeout=120)
print(json.dumps({
    "seconds": time.perf_counter() - start,
    "peak_mb": resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024,
    "rc": done.returncode, "stdout": done.stdout, "stderr": done.stderr[-4000:],
}))
"""


def measured(argv: list[str], **kwargs: object) -> dict:
    """Run `argv` in a child and return rc, stdout, stderr, seconds and peak_mb."""
    wrapper = subprocess.run(
        [sys.executable, "-c", _MEASURE, *argv], capture_output=True, text=True, **kwargs
    )
    return json.loads(wrapper.stdout)


def _fan_out(levels: int) -> dict[str, str]:
    """`main.tex` inputs f0; each fN inputs fN+1 twice: 2^levels copies from ~1 KB."""
    files = {"main.tex": f"{PREAMBLE}\\input{{f0}}{END}", f"f{levels}.tex": "leaf\n"}
    for n in range(levels):
        files[f"f{n}.tex"] = f"word{n} \\input{{f{n + 1}}} \\input{{f{n + 1}}}\n"
    return files


def _repeated(unit: str, size: int) -> dict[str, str]:
    return {"main.tex": PREAMBLE + unit * (size // len(unit)) + END}


def _macro_bomb(uses: int) -> dict[str, str]:
    definition = "\\newcommand{\\a}{" + "x" * 3990 + "}\n"
    return {"main.tex": definition + PREAMBLE + "\\a " * uses + END}


HOSTILE_LATEX = {
    "fan-out, 30 levels": (_fan_out(30), "too_large"),
    "\\author{ repeated, 165 KB": (_repeated("\\author{", 165_000), "too_short"),
    "\\newcommand{ repeated, 245 KB": (_repeated("\\newcommand{", 245_000), None),
    "\\begin{thebibliography} repeated, 460 KB": (
        _repeated("\\begin{thebibliography}", 460_000),
        None,
    ),
    "\\begin{abstract} repeated, 325 KB": (_repeated("\\begin{abstract}", 325_000), None),
    "\\def\\x repeated, 200 KB": (_repeated("\\def\\x", 200_000), None),
    "macro bomb, 409 KB": (_macro_bomb(136_000), "too_large"),
}


def _write(folder: Path, files: dict[str, str]) -> Path:
    folder.mkdir(parents=True)
    for name, text in files.items():
        (folder / name).write_text(text)
    return folder


@pytest.mark.parametrize("case", list(HOSTILE_LATEX))
def test_hostile_latex_is_cleaned_or_quarantined_in_bounded_time_and_memory(
    case: str, tmp_path: Path
) -> None:
    files, reason = HOSTILE_LATEX[case]
    folder = _write(tmp_path / "paper", files)
    run = measured([*LILO, "clean", str(folder), "--json", "--data-dir", str(tmp_path / "d")])
    assert run["seconds"] < MAX_SECONDS and run["peak_mb"] < MAX_MB, (case, run)
    if reason is None:
        assert run["rc"] == 0, run["stderr"]
        assert len(json.loads(run["stdout"])["text"]) < 2 * sum(map(len, files.values()))
    else:
        assert run["rc"] == 1 and f": {reason}: " in run["stderr"], run["stderr"]


def _archive(tmp_path: Path, name: str, files: dict[str, str]) -> Path:
    archive = tmp_path / f"{name}.tar.gz"
    with tarfile.open(archive, "w:gz") as tar:
        for rel, text in files.items():
            path = tmp_path / name / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text)
            tar.add(path, arcname=rel)
    return archive


def _raw(arxiv_id: str, archive: Path) -> RawSource:
    return RawSource(arxiv_id, arxiv_id, str(archive), archive.stat().st_size, "tar.gz")


def test_one_bad_paper_never_blocks_the_others_nor_a_rerun(tmp_path: Path, prefect_harness) -> None:
    """The 868-byte fan-out e-print among good papers: quarantined with its reason, the good
    one cleaned, and the rerun has nothing to do."""
    good = tmp_path / "good.tar.gz"
    with tarfile.open(good, "w:gz") as tar:
        tar.add(PAPERS / "celerite-scalable-gp", arcname=".")
    bomb = _archive(tmp_path, "bomb", _fan_out(30))
    assert bomb.stat().st_size < 2000
    settings = Settings().with_overrides({"data_dir": str(tmp_path / "data")})
    with Warehouse(settings.db_path) as wh:
        raws = [_raw("2401.00001", good), _raw("2401.00002", bomb)]
        wh.upsert("stg_raw_sources", raws, ("arxiv_id",), extra={"run_id": "r0"})
    start = time.perf_counter()
    clean_flow(settings, "r1")
    assert time.perf_counter() - start < 60
    with Warehouse(settings.db_path) as wh:
        assert set(load_papers(wh)) == {"2401.00001"}
        (row,) = wh.rows("SELECT item_id, reason, detail FROM quarantine")
    assert row["item_id"] == "2401.00002" and row["reason"] == "too_large"
    assert "clean.max_files" in row["detail"]
    assert clean_flow(settings, "r2").notes == ["nothing new to clean"]


def test_a_unit_past_its_time_budget_has_its_process_stopped() -> None:
    """The backstop: a unit that never ends is stopped at the limit, the others finish."""
    start = time.perf_counter()
    results = map_processes(
        time.sleep, [0.01, 3600.0, 0.02], workers=2, limit_s=3.0, on_failure=lambda *a: a
    )
    assert time.perf_counter() - start < MAX_SECONDS
    assert results[0] is None and results[2] is None
    item, why, timed_out = results[1]
    assert item == 3600.0 and timed_out and "ran past 3 s" in why
