"""What a terminal shows, run as a user runs it (a real `lilo` process, its output a pipe, as in
a log file or CI), against a loopback endpoint whose replies and errors carry control
sequences, on a warehouse whose papers and QA pairs do too: the run prints lilo's own lines
(no Prefect INFO lines, no links to the temporary server that is gone when it ends) and a
progress line at a steady interval; and no command (the run's log, `lilo show`, `lilo
failures`, `lilo review`, `lilo review list`, `lilo clean`) writes a control character it did
not write itself: OSC 52 would set the clipboard, ESC[2J clear the screen, OSC 0 retitle the
window. Each failure stays one line."""

from __future__ import annotations

import io
import json
import os
import re
import subprocess
import sys
import time
from datetime import UTC, datetime
from pathlib import Path

import pytest
from llm_server import PAPER, LLMServer, Refusal, kernel_samples, seed_samples

from lilo.flows.cli import main
from lilo.tasks.records import PaperText, QAPair
from lilo.warehouse import Warehouse

pytestmark = pytest.mark.e2e  # a `lilo` run in a subprocess in most tests

LILO = [sys.executable, "-m", "lilo.flows.cli"]
# The clipboard (OSC 52), a cleared screen, a window title (OSC 0), a C1 CSI, a bidi override.
ATTACK = "\x1b]52;c;cHduZWQ=\x07\x1b[2J\x1b]0;pwned\x1b\\\x9b31m\u202e"
RAW = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")
SAMPLES = kernel_samples(2)  # s0 is summarized and scored; s1's generation is refused


def _model(prompt: str, n: int) -> str | Refusal:
    """Every reply carries the attack; the generation for s1 is refused with a plain-text
    error that carries it too, across lines."""
    if "<gold>" in prompt:
        return json.dumps({"reason": f"matches {ATTACK}", "score": 1})
    if '"checklists":' in prompt:
        ids = sorted(set(re.findall(r'"checklist_id": (\d+)', prompt)), key=int)
        return json.dumps(
            [{"checklist_id": i, "reason": ATTACK, "evaluation_score": 0.5} for i in ids]
        )
    if "<summary>" in prompt and "<question>" in prompt:
        return f"A test RMSE of 0.635.{ATTACK}"
    if "KernelForge1" in prompt:
        time.sleep(1.5)  # long enough for a progress line or two
        return Refusal(400, f"bad request{ATTACK}\nlilo: a forged second line")
    time.sleep(1.5)
    return f"KernelForge0 obtains a test RMSE of 0.635 on Kin40k.{ATTACK} It is fast. " * 5


def _env(prefect_home: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PREFECT_", "LILO_"))}
    env["PREFECT_HOME"] = str(prefect_home)
    env["PYTHONPATH"] = os.pathsep.join([str(Path(__file__).parent.parent), *sys.path])
    return env


def _seed(settings) -> None:
    """Two samples about KernelForge, their approved pairs, s0's paper quoting the attack,
    and a pending pair whose question carries it (for the reviewer's terminal)."""
    seed_samples(settings, SAMPLES)
    paper = PaperText("2601.00000", f"Kernels {ATTACK}", f"{PAPER}\n{ATTACK} Appendix.", 50,
                      70, "main.tex", "t", "s", "c0")  # fmt: skip
    pending = QAPair("s0-pending", "s0", "single", ("2601.00000",), f"What is it?{ATTACK}",
                     f"An attack.{ATTACK}", ({"paper_id": "2601.00000", "quote": ATTACK},),
                     "pending", 1, "", "", "p1", "seed")  # fmt: skip
    version = {"dataset_version": "v1", "number": 1, "surveys": ["s"], "n_samples": 2,
               "n_papers": 2, "config_hash": "seed",
               "created_at": datetime.now(UTC).replace(tzinfo=None)}  # fmt: skip
    with Warehouse(settings.db_path) as wh:
        wh.upsert("dim_papers", [paper], ("paper_id",), update=True, extra={"run_id": "seed"})
        wh.upsert("fct_qa_pairs", [pending], ("qa_id",), extra={"run_id": "seed"})
        wh.upsert("dim_dataset_versions", [version], ("dataset_version",),
                  extra={"run_id": "seed"})  # fmt: skip


@pytest.fixture(scope="module")
def run(tmp_path_factory, used_prefect_home) -> tuple[Path, subprocess.CompletedProcess[str]]:
    """`lilo run --dataset v1` as a terminal user starts it, output to pipes."""
    tmp = tmp_path_factory.mktemp("terminal")
    data, home = tmp / "data", used_prefect_home(tmp / "prefect")
    with LLMServer() as server:
        server.respond = _model
        _seed(server.settings(data))
        done = subprocess.run(
            [*LILO, "run", "--dataset", "v1", "--data-dir", str(data), "--methods", "single",
             "--target-words", "400", "--set", "llm.backend=openai",
             "--set", "llm.model=scripted", "--set", f"llm.base_url={server.base_url}",
             "--set", "llm.api_key=sk-test", "--set", "llm.concurrency=1",
             "--set", "embedding.backend=openai", "--set", f"embedding.base_url={server.base_url}",
             "--set", "embedding.api_key=sk-test", "--set", "embedding.model=bag",
             "--set", "qa.quota_single=2", "--set", "qa.quota_cross=0",
             "--set", "runner.progress_every_s=0.5"],
            env=_env(home), capture_output=True, text=True, timeout=900,
        )  # fmt: skip
    return data, done


def _raw(text: str) -> list[str]:
    """The control characters in `text` (newlines and tabs aside), as escapes."""
    return sorted({repr(c) for c in RAW.findall(text)})


@pytest.mark.slow  # reads the `run` fixture: `lilo run` in a subprocess
def test_a_run_prints_lilo_s_lines_and_its_progress_without_a_terminal(run):
    _, done = run
    assert done.returncode in (0, 1), done.stderr[-3000:]
    err = done.stderr
    assert "generate done in" in err and "score done in" in err
    assert "Flow run '" not in err and "Task run '" not in err  # Prefect's INFO lines
    assert "View at http" not in err  # its temporary server is gone when the run ends
    # A line of the generate stage's progress while its units were under way.
    assert re.search(r"generate: \d/2 units, \d+ LLM calls", err), err[-3000:]


@pytest.mark.slow  # reads the `run` fixture: `lilo run` in a subprocess
def test_the_run_log_quotes_an_endpoint_error_on_one_line_and_harmless(run):
    _, done = run
    out = done.stdout + done.stderr
    assert _raw(out) == []
    refused = [line for line in done.stderr.splitlines() if "bad request" in line]
    assert refused and all("\\u001b]52;c;" in line for line in refused)
    assert not any(line.startswith("lilo: a forged") for line in out.splitlines())


@pytest.mark.slow  # reads the `run` fixture: `lilo run` in a subprocess
def test_show_prints_the_summary_s_answers_and_grades_harmless(run, capsys):
    data, _ = run
    assert main(["show", "s0", "--method", "single", "--data-dir", str(data)]) == 0
    out = capsys.readouterr().out
    assert "\\u001b]52;c;cHduZWQ=" in out  # shown, not sent to the terminal
    assert _raw(out) == []


@pytest.mark.slow  # reads the `run` fixture: `lilo run` in a subprocess
def test_failures_keeps_each_failure_on_one_line(run, capsys):
    data, _ = run
    assert main(["failures", "--data-dir", str(data)]) == 0
    *rows, count = capsys.readouterr().out.splitlines()
    assert count == f"{len(rows)} failure{'' if len(rows) == 1 else 's'}" and rows
    assert all(row.count("\t") == 4 for row in rows), rows
    assert any("bad request" in row and "a forged second line" in row for row in rows)
    assert _raw("\n".join(rows)) == []


@pytest.mark.slow  # reads the `run` fixture: `lilo run` in a subprocess
def test_the_reviewer_s_terminal_shows_the_pair_harmless(run, capsys, monkeypatch):
    data, _ = run
    monkeypatch.setattr(sys, "stdin", io.StringIO("q\n"))
    assert main(["review", "--data-dir", str(data), "--reviewer", "dee"]) == 0
    shown = capsys.readouterr().out
    assert "Q: What is" in shown and "\\u001b[2J" in shown
    assert main(["review", "list", "--data-dir", str(data)]) == 0
    listed = capsys.readouterr().out
    assert "What is" in listed
    assert _raw(shown + listed) == []


def test_clean_prints_a_paper_harmless(tmp_path, capsys):
    (tmp_path / "paper").mkdir()
    words = " ".join(["word"] * 2100)
    (tmp_path / "paper" / "main.tex").write_text(
        f"\\documentclass{{article}}\\begin{{document}}\n\\section{{Intro}}\n{words} {ATTACK} "
        "the end.\n\\end{document}\n"
    )
    common = ["--data-dir", str(tmp_path / "data")]
    assert main(["clean", str(tmp_path / "paper"), *common]) == 0
    assert main(["clean", str(tmp_path / "paper"), "--json", *common]) == 0
    text, document = capsys.readouterr().out.split("\n{", 1)
    assert "\\u001b]0;pwned" in text and _raw(text) == []
    assert ATTACK in json.loads("{" + document)["text"]  # as JSON reads it: the paper's own
    assert _raw(document) == []


def test_printable_shows_every_control_character_and_keeps_lines_unless_asked():
    from lilo.tasks.printable import printable

    assert printable("a\x1b[2Jb\tc\nd\x9b\u202e") == "a\\u001b[2Jb\tc\nd\\u009b\\u202e"
    assert printable("one\r\n  two\tthree", one_line=True) == "one two three"
    assert printable("[bold]x[/bold]\x07", markup=True) == "\\[bold]x\\[/bold]\\u0007"
    assert printable("naïve — 𝛼") == "naïve — 𝛼"  # printable text as it is
