"""Hostile inputs, built here as an attacker would: LaTeX that fans out, grows quadratically
or explodes through macros; quotes in every path and name; a method's error that echoes the
API key (an endpoint that echoes it: tests/test_secrets.py); leftovers after a kill;
host-file probes; unbounded readers. A case that could hang or exhaust memory runs in a child
process whose time and peak memory are bounded (the peak is RUSAGE_CHILDREN of a waiting
wrapper: the work's own process tree only)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import tarfile
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import duckdb
import pytest
from conftest import PAPERS
from llm_server import LLMServer

from lilo.flows._load import load_papers
from lilo.flows._run import recorded_run
from lilo.flows.clean import clean_flow
from lilo.tasks.clean.latex import clean_source
from lilo.tasks.config import Settings
from lilo.tasks.files import temp_path
from lilo.tasks.parallel import map_processes
from lilo.tasks.records import RawSource
from lilo.tasks.redact import configured_secrets, redact
from lilo.warehouse import Warehouse
from lilo.warehouse.publishing import publish_warehouse

LILO = [sys.executable, "-m", "lilo.flows.cli"]
MAX_SECONDS = 30.0
MAX_MB = 1024.0
PREAMBLE = "\\documentclass{article}\n\\begin{document}\n"
END = "\n\\end{document}\n"
# Runs argv and reports its wall time and the peak RSS of its process tree.
_MEASURE = """
import json, resource, subprocess, sys, time
start = time.perf_counter()
done = subprocess.run(sys.argv[1:], capture_output=True, text=True, timeout=900)
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


# Runs each `lilo` command sent on stdin in a child forked from one interpreter that has
# imported lilo: every command its own process, time and peak memory (wait4: the child's own
# process tree), without paying each time for Python's imports and its teardown of them
# (the child runs the exit handlers, then ends).
_FORKS = """
import atexit, json, os, signal, sys, time, traceback
from lilo.flows.cli import main
from lilo.flows.cli._main import _parser
_parser()  # every command's module imported once, before the first fork
for line in sys.stdin:
    argv, out, err = json.loads(line)
    start = time.perf_counter()
    pid = os.fork()
    if pid == 0:
        for fd, path in ((1, out), (2, err)):
            os.dup2(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC), fd)
        signal.alarm(900)  # a command that hangs ends here, as the timeout of `measured`
        try:
            code = main(argv)
        except BaseException:
            traceback.print_exc()
            code = 1
        atexit._run_exitfuncs()
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)
    _, status, usage = os.wait4(pid, 0)
    print(json.dumps({"seconds": time.perf_counter() - start, "peak_mb": usage.ru_maxrss / 1024,
                      "rc": os.waitstatus_to_exitcode(status)}), flush=True)
"""


@pytest.fixture(scope="module")
def lilo_forked(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Callable[[list[str]], dict]]:
    """`measured` for `lilo` commands: rc, stdout, stderr, seconds and peak_mb of `lilo argv`
    run in a child forked from one interpreter with lilo imported."""
    logs = tmp_path_factory.mktemp("forked")
    forks = subprocess.Popen([sys.executable, "-c", _FORKS], stdin=subprocess.PIPE,
                             stdout=subprocess.PIPE, text=True)  # fmt: skip
    assert forks.stdin is not None and forks.stdout is not None

    def run(argv: list[str]) -> dict:
        out, err = logs / "stdout", logs / "stderr"
        forks.stdin.write(json.dumps([argv, str(out), str(err)]) + "\n")
        forks.stdin.flush()
        line = forks.stdout.readline()
        assert line, f"the forking interpreter ended with {forks.wait()}"
        return {**json.loads(line), "stdout": out.read_text(), "stderr": err.read_text()[-4000:]}

    yield run
    forks.stdin.close()
    forks.wait(timeout=60)


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
    "\\url{% on one 800 KB line": (_repeated("\\url{%", 800_000), "too_short"),
    "\\begin{verbatim}% unclosed, 800 KB": (_repeated("\\begin{verbatim}%\n", 800_000), None),
    "\\printbibliography[ repeated, 400 KB": (
        _repeated("\\printbibliography[", 400_000),
        "too_short",
    ),
}


def _write(folder: Path, files: dict[str, str]) -> Path:
    folder.mkdir(parents=True)
    for name, text in files.items():
        (folder / name).write_text(text)
    return folder


@pytest.mark.parametrize("case", list(HOSTILE_LATEX))
def test_hostile_latex_is_cleaned_or_quarantined_in_bounded_time_and_memory(
    case: str, tmp_path: Path, lilo_forked: Callable[[list[str]], dict]
) -> None:
    files, reason = HOSTILE_LATEX[case]
    folder = _write(tmp_path / "paper", files)
    run = lilo_forked(["clean", str(folder), "--json", "--data-dir", str(tmp_path / "d")])
    assert run["seconds"] < MAX_SECONDS and run["peak_mb"] < MAX_MB, (case, run)
    if reason is None:
        assert run["rc"] == 0, run["stderr"]
        assert len(json.loads(run["stdout"])["text"]) < 2 * sum(map(len, files.values()))
    else:
        assert run["rc"] == 1 and f": {reason}: " in run["stderr"], run["stderr"]


def _archive(tmp_path: Path, name: str, files: dict[str, str], packed: bool = True) -> Path:
    archive = tmp_path / (f"{name}.tar.gz" if packed else f"{name}.tar")
    with tarfile.open(archive, "w:gz" if packed else "w") as tar:
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


@pytest.mark.slow  # a worker process left to run to its 3 s limit
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


def test_redact_removes_configured_keys_bearer_tokens_and_sk_keys() -> None:
    settings = Settings().with_overrides({"judge.api_key": "plain-secret-42"})
    assert "plain-secret-42" in configured_secrets(settings)
    text = "denied plain-secret-42; Bearer abc.def; key sk-proj-AbC_123456 ok"
    assert redact(text, configured_secrets(settings)) == (
        "denied [redacted]; Bearer [redacted]; key [redacted] ok"
    )


@pytest.mark.slow  # `lilo clean` in a subprocess, killed mid-clean
def test_leftovers_of_killed_processes_are_swept_by_the_next_run(tmp_path: Path) -> None:
    """`lilo clean` killed with SIGKILL mid-clean leaves its unpacked e-print in the data
    dir's `tmp/` (never the system temp dir), marked as its own; the next run's start
    removes it, with a killed publish's copy and the `.wal` DuckDB kept beside it."""
    data = tmp_path / "data"
    slow = {"main.tex": PREAMBLE + "Some words and \\emph{more} \\cite{x}.\n\n" * 400_000 + END}
    archive = _archive(tmp_path, "slow", slow, packed=False)  # 16 MB: no gzip-bomb ratio
    system_temp = set(Path(tempfile.gettempdir()).glob("lilo-*"))
    child = subprocess.Popen(
        [*LILO, "clean", str(archive), "--data-dir", str(data)], stdout=subprocess.DEVNULL
    )
    deadline = time.monotonic() + MAX_SECONDS
    while not list((data / "tmp").glob(".clean-*/*/main.tex")) and time.monotonic() < deadline:
        time.sleep(0.05)
    time.sleep(0.5)
    child.send_signal(signal.SIGKILL)
    child.wait()
    (left,) = (data / "tmp").iterdir()
    owner = left.name.split(".")[-2]  # lilo-<machine>-<pid>-<start>
    assert owner.split("-")[2] == str(child.pid) and list(left.glob("*/main.tex"))
    assert set(Path(tempfile.gettempdir()).glob("lilo-*")) == system_temp
    copy = data / "tmp" / f".lilo.duckdb.0123abcd.{owner}.tmp"  # what a killed publish leaves
    for path in (copy, copy.with_name(copy.name + ".wal")):
        path.write_bytes(b"half a copy")
    mine = temp_path(data, "clean-live")  # a live process's: kept
    mine.mkdir()

    with recorded_run(Settings(data_dir=data), "next"):
        pass
    assert sorted(p.name for p in (data / "tmp").iterdir()) == [mine.name]


def test_inputs_outside_the_archive_get_one_warning_whether_or_not_the_file_exists(
    tmp_path: Path,
) -> None:
    """No file-existence oracle: a host file that exists (beside paper `a`) and one that does
    not (beside paper `b`) are "outside the archive" alike, by absolute path, `..` or
    `\\import`, and never read."""
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "secret.tex").write_text("host text\n")
    forms = ["\\input{{{}}}", "\\include{{{}}}", "\\input {}", "\\subfile{{{}}}"]
    warnings: dict[str, list[list[str]]] = {"a": [], "b": []}
    for side in warnings:
        host = tmp_path / side
        bodies = [form.format(w) for form in forms for w in (host / "secret", "../secret.tex")]
        bodies += [f"\\import{{{host}/}}{{secret}}", "\\import{../}{secret}"]
        for n, body in enumerate(bodies):
            folder = _write(host / f"paper{n}", {"main.tex": PREAMBLE + body + END})
            cleaned = clean_source(folder, Settings().clean)
            assert "host text" not in cleaned.text
            warnings[side].append([w.replace(str(host), "HOST") for w in cleaned.warnings])
    assert warnings["a"] == warnings["b"]
    assert all(any("outside the archive" in w for w in found) for found in warnings["a"])


@pytest.mark.parametrize(
    "argv, named",
    [
        (["clean", "/dev/zero"], "/dev/zero: not a regular file"),
        (["clean", "{folder}", "--config", "/dev/zero"], "/dev/zero: not a regular file"),
        (["clean", "{folder}", "--config", "{big}"], "larger than 1,000,000 bytes"),
        (["clean", "{folder}", "--config", "{deep}"], "nested too deeply"),
        (["review", "import", "/dev/zero", "--reviewer", "bob"], "/dev/zero: not a regular file"),
        (["review", "import", "{huge}", "--reviewer", "bob"], "huge.jsonl: larger than 100,000,"),
    ],
)
def test_unbounded_files_are_refused_in_one_line_naming_them(
    argv: list[str], named: str, tmp_path: Path, lilo_forked: Callable[[list[str]], dict]
) -> None:
    paths = {
        "folder": _write(tmp_path / "paper", {"main.tex": PREAMBLE + "Hello." + END}),
        "big": tmp_path / "big.toml",
        "deep": tmp_path / "deep.toml",
        "huge": tmp_path / "huge.jsonl",
    }
    paths["big"].write_text("# padding\n" * 200_000)
    paths["huge"].touch()
    os.truncate(paths["huge"], 100_000_001)  # sparse: costs no disk
    paths["deep"].write_text("x = " + "[" * 100_000 + "]" * 100_000 + "\n")
    argv = [a.format(**paths) for a in argv]
    run = lilo_forked([*argv, "--data-dir", str(tmp_path / "d")])
    assert run["seconds"] < MAX_SECONDS and run["peak_mb"] < MAX_MB, run
    lines = run["stderr"].strip().splitlines()
    assert run["rc"] == 2 and len(lines) == 1 and named in lines[0], run["stderr"]


def test_a_benchmark_clones_unbounded_files_are_skipped_naming_them(tmp_path: Path) -> None:
    """A paper that is `/dev/zero` is not a paper (its group is too small); a paper, a
    questions file and a template past their limits are one problem each naming the file;
    the rest of the benchmark is read, quickly."""
    from test_import_benchmark import write_benchmark

    from lilo.tasks.benchmark import read_longinoutbench
    from lilo.tasks.benchmark._files import MAX_JSON_BYTES, MAX_PAPER_BYTES

    clone = write_benchmark(tmp_path / "clone", (1, 2, 3, 4))
    ds = clone / "dataset"
    zero = next((ds / "papers" / "cleaned" / "group_1").glob("*.tex"))
    zero.unlink()
    zero.symlink_to("/dev/zero")
    paper = next((ds / "papers" / "cleaned" / "group_2").glob("*.tex"))
    os.truncate(paper, MAX_PAPER_BYTES + 1)
    questions = ds / "questions" / "single" / "group_3.json"
    os.truncate(questions, MAX_JSON_BYTES + 1)
    template = next((ds / "prompt").iterdir())
    os.truncate(template, 1_000_001)
    start = time.perf_counter()
    bench = read_longinoutbench(clone, "lib")
    assert time.perf_counter() - start < MAX_SECONDS
    shown = {path: path.relative_to(clone).as_posix() for path in (paper, questions, template)}
    assert {q.detail for q in bench.problems if q.reason == "too_large"} == {
        f"{shown[paper]}: larger than 20,000,000 bytes: file skipped",
        f"{shown[questions]}: larger than 100,000,000 bytes: file skipped",
        f"{shown[template]}: larger than 1,000,000 bytes: file skipped",
    }
    assert any(q.item_id == "lib/group_1" for q in bench.problems if q.reason == "group_size")
    assert [g.number for g in bench.groups] == [2, 3, 4]  # as with a paper not UTF-8


def test_a_probe_clones_unbounded_files_are_refused_naming_them(tmp_path: Path) -> None:
    """The KV file is a FIFO (a read would wait forever; `/dev/zero` through a link is a
    link out of the clone, tests/test_probes.py); the oracle file a gzip of one line with no
    line break past the limit; a prompt template past its limit: one problem each, quickly."""
    import gzip

    from test_probes import make_clone

    from lilo.tasks.probes.clone import MAX_LINE_CHARS, read_clone
    from lilo.tasks.probes.prompts import CLONE_PROMPTS

    clone = make_clone(tmp_path / "clone")
    kv = clone / "kv_retrieval_data" / "kv-retrieval-75_keys.jsonl.gz"
    kv.unlink()
    os.mkfifo(kv)
    with gzip.open(clone / "qa_data" / "nq-open-oracle.jsonl.gz", "wt") as bomb:
        bomb.write("x" * (MAX_LINE_CHARS + 10))
    prompt = next((clone / "src" / "lost_in_the_middle" / "prompts").iterdir())
    os.truncate(prompt, 1_000_001)
    start = time.perf_counter()
    found = read_clone(clone)
    assert time.perf_counter() - start < MAX_SECONDS
    details = {q.detail for q in found.problems if q.reason != "probe_item"}
    name = next(n for n, f in CLONE_PROMPTS.items() if f == prompt.name)
    assert details == {
        "kv_retrieval_data/kv-retrieval-75_keys.jsonl.gz: unreadable after 0 lines: "
        "not a regular file",
        "qa_data/nq-open-oracle.jsonl.gz: unreadable after 0 lines: "
        "line 1 longer than 1,000,000 characters",
        f"{prompt.relative_to(clone)}: larger than 1,000,000 bytes; "
        f"lilo's own {name} prompt stands in",
    }
    assert len(found.items) == 3, "the 10-document files are still read"


def test_a_tex_file_past_the_size_limit_quarantines_the_paper_naming_it(
    tmp_path: Path, lilo_forked: Callable[[list[str]], dict]
) -> None:
    folder = _write(tmp_path / "paper", {"main.tex": PREAMBLE + "word " * 2000 + END})
    argv = ["clean", str(folder), "--data-dir", str(tmp_path / "d")]
    run = lilo_forked([*argv, "--set", "clean.max_text_chars=5000"])
    assert run["rc"] == 1, run["stderr"]
    assert "too_large: main.tex: larger than 5,000 bytes" in run["stderr"]


def test_a_bib_entry_with_50000_nested_braces_does_not_reject_the_survey(
    tmp_path: Path, lilo_forked: Callable[[list[str]], dict]
) -> None:
    deep = "{" * 50_000 + "x" + "}" * 50_000
    bib = (
        "@article{good, title={Fine}, eprint={2101.00001}}\n"
        f"@article{{deep, title={{{deep}}}}}\n"
        "@article{also, title={Also fine}, eprint={2101.00002}}\n"
    )
    main = PREAMBLE + "See \\cite{good,deep,also}.\n\\bibliography{refs}" + END
    folder = _write(tmp_path / "survey", {"main.tex": main, "refs.bib": bib})
    run = lilo_forked(["refs", str(folder), "--offline", "--data-dir", str(tmp_path / "d")])
    assert run["seconds"] < MAX_SECONDS and run["peak_mb"] < MAX_MB, run
    assert run["rc"] == 0, run["stderr"]
    ids = [json.loads(line)["arxiv_id"] for line in run["stdout"].splitlines()]
    assert ids == ["2101.00001", None, "2101.00002"]


HOSTILE_NAME = "o'brien; --\"x"


@pytest.mark.e2e  # a `lilo demo` in a subprocess
@pytest.mark.slow
def test_quotes_semicolons_and_comments_in_every_path_and_name_run_a_real_pipeline(
    tmp_path: Path, used_prefect_home
) -> None:
    """The data dir, the config file and the dataset version hold SQL's quotes, statement
    separators and comment markers: the demo runs and publishes, nothing runs as SQL. The
    vectors, cached under that data dir, come from a loopback server: the local model reads
    nothing from these paths, and a new process loading it costs 10 s of CPU."""
    root = tmp_path / HOSTILE_NAME
    data = root / f"data {HOSTILE_NAME}"
    config = root / f"c{HOSTILE_NAME}.toml"
    version = "v1';DROP-TABLE-dim_papers;--\"x"
    root.mkdir()
    config.write_text(f"dataset_version = {json.dumps(version)}\n")
    env = {**os.environ, "PREFECT_HOME": str(used_prefect_home(tmp_path / "prefect"))}
    common = ["--data-dir", str(data), "--config", str(config)]
    argv = [*LILO, "demo", *common, "--methods", "single", "--target-words", "1000"]
    argv += ["--set", "samples.target_samples=1"]  # one sample is as much as this needs
    with LLMServer() as embeddings:
        run = measured(argv, env={**env, **embeddings.embedding_env()}, timeout=600)
    assert embeddings.requests, "no vector came from the loopback server"
    assert run["rc"] == 0, run["stderr"][-2000:]
    con = duckdb.connect(str(data / "published" / "lilo.duckdb"), read_only=True)
    try:
        assert con.execute("SELECT DISTINCT dataset_version FROM dim_samples").fetchall() == [
            (version,)
        ]
        assert con.execute("SELECT count(*) FROM dim_papers").fetchone()[0] > 0
    finally:
        con.close()
    assert list((data / "published" / "results").glob("version=*/res_scores.parquet"))
    assert sorted(p.name for p in tmp_path.iterdir()) == [HOSTILE_NAME, "prefect"]
    assert sorted(p.name for p in root.iterdir()) == sorted([data.name, config.name])
    board = measured([*LILO, "leaderboard", *common], env=env)
    assert board["rc"] == 0 and "single" in board["stdout"], board["stderr"]


def test_publish_takes_paths_as_parameters(tmp_path: Path) -> None:
    """The warehouse file and its published copy at hostile paths, directly."""
    folder = tmp_path / HOSTILE_NAME
    with Warehouse(folder / f"{HOSTILE_NAME}.duckdb") as wh:
        wh.upsert("runs", [], ("run_id",))
        data = folder / HOSTILE_NAME
        published = publish_warehouse(wh, data / "published" / f"{HOSTILE_NAME}.duckdb", data)
    assert published.exists() and sorted(p.name for p in tmp_path.iterdir()) == [HOSTILE_NAME]


def _workers(pid: int) -> set[int]:
    """The spawned worker processes of `pid` (not multiprocessing's resource tracker)."""
    found = set()
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            parent = int(stat.read_text().rpartition(")")[2].split()[1])
            spawned = b"spawn_main" in (stat.parent / "cmdline").read_bytes()
        except OSError:
            continue
        if parent == pid and spawned:
            found.add(int(stat.parent.name))
    return found


@pytest.mark.slow  # a parent in a subprocess killed, its workers watched
def test_workers_end_with_a_parent_killed_by_sigkill() -> None:
    """A run killed mid-clean leaves no worker behind to go on cleaning."""
    program = (
        "import time\nfrom lilo.tasks.parallel import map_processes\n"
        "map_processes(time.sleep, [3600, 3600], 2, 3600, lambda *a: a)\n"
    )
    parent = subprocess.Popen([sys.executable, "-c", program])
    deadline = time.monotonic() + MAX_SECONDS
    while len(workers := _workers(parent.pid)) < 2 and time.monotonic() < deadline:
        time.sleep(0.1)
    assert len(workers) == 2
    parent.send_signal(signal.SIGKILL)
    parent.wait()
    deadline = time.monotonic() + 10
    while any(Path(f"/proc/{pid}").exists() for pid in workers) and time.monotonic() < deadline:
        time.sleep(0.1)
    alive = [pid for pid in workers if Path(f"/proc/{pid}").exists()]
    for pid in alive:
        os.kill(pid, signal.SIGKILL)
    assert alive == []


@pytest.mark.parametrize("unit", ["\\cite{", "\\section{", "\\begin{thebibliography}"])
def test_a_hostile_survey_is_read_in_bounded_time_and_memory(
    unit: str, tmp_path: Path, lilo_forked: Callable[[list[str]], dict]
) -> None:
    """Units that once made every later one rescan the rest of the text (100 KB of
    `\\cite{` took 40 s, 400 KB 458 s)."""
    body = unit * (200_000 // len(unit))
    main = PREAMBLE + "See \\cite{good}.\n" + body + "\n\\bibliography{refs}" + END
    bib = "@article{good, title={Fine}, eprint={2101.00001}}\n"
    folder = _write(tmp_path / "survey", {"main.tex": main, "refs.bib": bib})
    run = lilo_forked(["refs", str(folder), "--offline", "--data-dir", str(tmp_path / "d")])
    assert run["seconds"] < MAX_SECONDS and run["peak_mb"] < MAX_MB, run
    assert run["rc"] == 0 and "2101.00001" in run["stdout"], run["stderr"]


def test_a_methods_own_error_that_echoes_the_key_is_recorded_redacted(tmp_path: Path) -> None:
    """Not an LLM error: a method's own failure (a library it calls echoing its
    configuration) is recorded on the Generation with the key redacted."""
    from test_formulas import _papers

    from lilo.tasks.embeddings import Embedder
    from lilo.tasks.llm import make_client
    from lilo.tasks.methods import Unit
    from lilo.tasks.methods.base import _Registered
    from lilo.tasks.prompt_packs import lilo_pack
    from lilo.tasks.records import Sample

    key = "sk-echoed0123456789abcdef"
    settings = Settings(data_dir=tmp_path, **{"llm": {"api_key": "plain-key-1234"}})

    def write(run: object) -> object:
        raise RuntimeError(f"compressor said: bad auth {key} with plain-key-1234")

    papers = _papers()
    sample = Sample("s1", "v1", tuple(p.paper_id for p in papers), "T", "s", 1, "command")
    method = _Registered("echo", {}, "echo", write)
    generation = method.run(
        Unit(sample, papers, 1000),
        make_client(settings),
        Embedder(settings.embedding, settings.data_dir),
        lilo_pack(),
    )
    assert generation.error == "RuntimeError: compressor said: bad auth [redacted] with [redacted]"
