"""API keys never leave lilo's memory except towards their endpoint: a demo-sized run with
keys from the environment and from a config file, against the loopback endpoint (chat, with
faults: some of them the 400 that echoes the key sent, as OpenAI's does for a wrong key; and
embeddings), then a failing `--debug` run; no file lilo or Prefect wrote (data dir,
PREFECT_HOME), no DuckDB table and neither output stream holds any key, and the echoed error
is recorded redacted."""

from __future__ import annotations

import contextlib
import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import duckdb
import pytest
from llm_server import Faults, LLMServer

pytestmark = pytest.mark.e2e  # a `lilo` run in a subprocess in most tests

KEYS = {
    "LILO_JUDGE__API_KEY": "sk-lilo-judge-7f3a9c1e5b",
    "LILO_EMBEDDING__API_KEY": "sk-lilo-embedding-2d8e4f6a0c",
}
FILE_KEY = "sk-lilo-llm-from-file-9b1c3e5d7f"  # the generator's, in the --config file
ALL = [*KEYS.values(), FILE_KEY]


def _lilo(args: list[str], home: Path) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("LILO_", "PREFECT_API"))}
    env.update(KEYS, PREFECT_HOME=str(home), PYTHONPATH=os.pathsep.join(sys.path))
    return subprocess.run(
        [sys.executable, "-m", "lilo.flows.cli", *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )


def _hits(folder: Path) -> list[str]:
    """Files under `folder` holding a key, byte for byte, and DuckDB text columns holding one
    (DuckDB may store strings compressed)."""
    found = []
    for path in folder.rglob("*"):
        if not path.is_file():
            continue
        data = path.read_bytes()
        found += [f"{path}: {key}" for key in ALL if key.encode() in data]
        if path.suffix == ".duckdb" and data[8:12] == b"DUCK":
            found += _duckdb_hits(path)
    return found


def _duckdb_hits(path: Path) -> list[str]:
    con = duckdb.connect(str(path), read_only=True)
    try:
        columns = con.execute(
            "SELECT table_name, column_name FROM information_schema.columns "
            "WHERE table_schema = 'main' AND "
            "(data_type = 'VARCHAR' OR data_type LIKE '%[]' OR data_type = 'JSON')"
        ).fetchall()
        found = []
        for table, column in columns:
            for key in ALL:
                text = f'CAST("{column}" AS VARCHAR)'
                query = f'SELECT count(*) FROM "{table}" WHERE contains({text}, ?)'
                if con.execute(query, [key]).fetchone()[0]:
                    found.append(f"{path}:{table}.{column}: {key}")
        return found
    finally:
        con.close()


@pytest.mark.slow  # a whole run in a subprocess, every file it and Prefect wrote read
def test_no_key_in_anything_lilo_or_prefect_wrote(tmp_path, used_prefect_home):
    home, data = used_prefect_home(tmp_path / "prefect"), tmp_path / "data"
    with LLMServer() as server:
        server.faults = Faults(rate=0.2, seed=5, kinds=("500", "truncated", "empty", "key_echo"))
        config = tmp_path / "lilo.toml"  # outside the folders searched: it holds a key
        config.write_text(
            f'[llm]\nbackend = "openai"\nbase_url = "{server.base_url}"\nmodel = "scripted"\n'
            f'api_key = "{FILE_KEY}"\nretries = 0\n'
            f'[judge]\nbackend = "openai"\nbase_url = "{server.base_url}"\nmodel = "grader"\n'
            f"retries = 0\n"
            f'[embedding]\nbackend = "openai"\nbase_url = "{server.base_url}"\nmodel = "bag"\n'
        )
        common = ["--data-dir", str(data), "--config", str(config)]
        demo = _lilo(["demo", *common, "--methods", "single", "--target-words", "300"], home)
        sent = {(r["path"].rsplit("/", 1)[-1], r["auth"]) for r in server.requests}
        echoed = server.faults.counts["key_echo"]
    # a run that fails, with its traceback shown
    config.write_text(config.read_text().replace(server.base_url, "http://127.0.0.1:9/v1"))
    failing = _lilo(["--debug", "run", *common, "--survey", "2301.00001"], home)

    assert demo.returncode in (0, 1), demo.stderr[-2000:]
    # each key reached its endpoint, and only it
    embedding_key = f"Bearer {KEYS['LILO_EMBEDDING__API_KEY']}"
    assert {key for path, key in sent if path == "embeddings"} == {embedding_key}
    assert f"Bearer {FILE_KEY}" in {key for path, key in sent if path == "completions"}
    assert failing.returncode != 0 and "Traceback" in failing.stderr
    outputs = [demo.stdout, demo.stderr, failing.stdout, failing.stderr]
    assert [k for k in ALL for text in outputs if k in text] == []
    assert any(data.rglob("*.duckdb"))
    recorded = _echoed_errors(data / "lilo.duckdb")
    assert echoed, "no request drew the key_echo fault: change the Faults seed"
    assert recorded  # the endpoint's echo of the key, recorded redacted
    with contextlib.closing(sqlite3.connect(home / "prefect.db")) as db:  # the runs' server's
        assert db.execute("SELECT count(*) FROM flow_run").fetchone()[0] > 0
    written = [p for p in [*data.rglob("*"), *home.rglob("*")] if p.is_file()]
    hits = _hits(data) + _hits(home)
    print(
        f"\n{len(written)} files searched ({len(ALL)} keys, output streams too): {len(hits)} hits;"
        f" the key echoed {echoed} times, {len(recorded)} failures recorded redacted"
    )
    assert hits == []


def _echoed_errors(db: Path) -> list[str]:
    """The failures recorded with the endpoint's echo of the key, redacted."""
    con = duckdb.connect(str(db), read_only=True)
    try:
        rows = con.execute(
            "SELECT detail FROM quarantine UNION ALL SELECT error FROM fct_generations"
        ).fetchall()
    finally:
        con.close()
    return [r[0] for r in rows if r[0] and "Incorrect API key provided: Bearer [redacted]" in r[0]]
