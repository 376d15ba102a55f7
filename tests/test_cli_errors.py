"""Mistakes at the `lilo` command line: each one is a single `lilo: ...` line on
stderr and a non-zero exit (2 for bad input), found before any work starts, and the warehouse
is left as it was (or never created). Endpoints are loopback ports nothing listens on."""

from __future__ import annotations

import os
import random
import socket
import subprocess
import sys
import time
from pathlib import Path
from types import SimpleNamespace

import duckdb
import pytest

from lilo.flows._stage import score_columns
from lilo.flows.cli import main
from lilo.flows.cli._errors import CLIError
from lilo.flows.cli._forms import print_address
from lilo.flows.cli._main import _parser
from lilo.flows.cli._settings import settings_from_args
from lilo.flows.cli.review import _resolve, _short
from lilo.tasks.config import Settings
from lilo.tasks.config_loading import flow_parameters, load_settings
from lilo.tasks.errors import InputError
from lilo.tasks.records import QAPair, Sample
from lilo.warehouse import Warehouse

SURVEY = ["run", "--survey", "2301.00001"]


def _error(capsys: pytest.CaptureFixture[str]) -> str:
    """The one stderr line, checked to be one line that starts with `lilo: `."""
    err = capsys.readouterr().err
    assert err.startswith("lilo: ") and err.count("\n") == 1, err
    return err


def _closed_port() -> int:
    """A loopback port with nothing listening on it."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _counts(data: Path) -> dict[str, int]:
    con = duckdb.connect(str(data / "lilo.duckdb"), read_only=True)
    try:
        tables = [r[0] for r in con.execute("SELECT table_name FROM duckdb_tables()").fetchall()]
        return {t: con.execute(f'SELECT count(*) FROM "{t}"').fetchone()[0] for t in tables}
    finally:
        con.close()


@pytest.fixture
def warehouse(tmp_path: Path) -> Path:
    """A data folder with an empty warehouse, migrated as a flow makes it (its score
    columns recorded), and nothing published."""
    data = tmp_path / "data"
    Warehouse(data / "lilo.duckdb", scores=score_columns()).close()
    return data


# -- settings: files, environment, ranges ------------------------------------------------


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        (b"[llm\nmodel = 1\n", "config.toml: not valid TOML: Expected ']'"),
        (b"\x89PNG\r\n\x1a\n\x00\xff", "config.toml: not a text file"),
        (b"[llm]\nmodel = 'm'\nconcurrency = 0\n", "config.toml:3: llm.concurrency"),
        (b"[generate]\ntarget_words = [4000, 5]\n", "config.toml:2: generate.target_words.1"),
    ],
    ids=["malformed", "binary", "out-of-range", "list-item"],
)
def test_a_bad_config_file_names_itself_and_the_line(tmp_path, capsys, content, expected):
    config = tmp_path / "config.toml"
    config.write_bytes(content)
    data = tmp_path / "data"
    assert main([*SURVEY, "--config", str(config), "--data-dir", str(data)]) == 2
    assert expected in _error(capsys)
    assert not data.exists()


def test_a_config_that_is_missing_or_a_folder(tmp_path, capsys):
    assert main([*SURVEY, "--config", str(tmp_path / "nope.toml")]) == 2
    assert "nope.toml: no such config file" in _error(capsys)
    assert main([*SURVEY, "--config", str(tmp_path)]) == 2
    assert "is a folder" in _error(capsys)


def test_lists_in_the_environment_are_json(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("LILO_SURVEYS", "2301.00001,2301.00002")
    assert main(["run", "--data-dir", str(tmp_path / "data")]) == 2
    assert "LILO_SURVEYS is not valid JSON" in _error(capsys)
    monkeypatch.setenv("LILO_SURVEYS", "2301.00001")  # valid JSON, but a number
    assert main(["run", "--data-dir", str(tmp_path / "data")]) == 2
    assert "LILO_SURVEYS: Input should be a valid tuple" in _error(capsys)
    assert not (tmp_path / "data").exists()


def test_set_gives_a_list_setting_its_values_comma_separated():
    """`--set` takes any setting: a list's values comma-separated, as --sweep and the
    commands' own options take them (--target-words, `lilo probe kv --keys`)."""
    given = [
        *("--set", "generate.target_words=4000, 8000"),
        *("--set", "probe.kv_keys=75,140"),
        *("--set", "generate.methods=single,ral_writer"),
        *("--set", "generate.ral.k=8"),
    ]
    settings = settings_from_args(_parser().parse_args(["run", *given]))
    assert settings.generate.target_words == (4000, 8000)
    assert settings.probe.kv_keys == (75, 140)
    assert settings.generate.methods == ("single", "ral_writer")
    assert settings.generate.ral.k == 8


def test_lengths_are_taken_as_lilo_prints_them_and_method_as_show_spells_it():
    args = _parser().parse_args(["run", "--target-words", "4k,8K,16000", "--method", "single"])
    assert args.target_words == [4000, 8000, 16000] and args.methods == ["single"]


@pytest.mark.parametrize(
    ("options", "expected"),
    [
        (["--target-words", "4000,abc"], "'4000,abc' is not comma-separated lengths in words"),
        (["--target-words", "0"], "generate.target_words.0 = 0: Input should be greater"),
        (["--target-words=-5"], "generate.target_words.0 = -5: Input should be greater"),
        (["--target-words", "200000"], "Input should be less than or equal to 100000"),
        (["--set", "llm.concurrency=0"], "llm.concurrency = '0': Input should be greater"),
        (["--set", "llm.concurrency"], "'llm.concurrency' is not KEY=VALUE"),
        (["--set", "no.such=1"], "no: Extra inputs are not permitted"),
        (["--set", "generate.target_words=4000,lots"], "generate.target_words.1 = 'lots': Input"),
        (["--methods", "nosuch"], "unknown method nosuch in generate.methods (--methods): known"),
        (["--methods", "singel"], "singel in generate.methods (--methods): did you mean 'single'?"),
        (["--method", "ral_writr"], "ral_writr in generate.methods (--methods): did you mean 'ral"),
        (["--methods", "Single"], "unknown method Single in generate.methods (--methods): did you"),
        (["--target-words", "4k,lots"], "'4k,lots' is not comma-separated lengths in words"),
        (["--survey", "not-an-id"], "surveys: not an arXiv id: 'not-an-id'"),
    ],
    ids=lambda v: " ".join(v) if isinstance(v, list) else "",
)
def test_bad_run_options_are_rejected_at_once(tmp_path, capsys, options, expected):
    data = tmp_path / "data"
    started = time.perf_counter()
    assert main([*SURVEY, *options, "--data-dir", str(data)]) == 2
    assert expected in _error(capsys)
    assert time.perf_counter() - started < 30  # no retries, no Prefect server
    assert not data.exists()


def test_an_unknown_dataset_is_one_line_before_any_work(warehouse, capsys):
    """`run --dataset` with a name the warehouse does not hold: exit 2 and the known ones,
    checked before Prefect's temporary server would start."""
    from lilo.warehouse import Warehouse

    with Warehouse(warehouse / "lilo.duckdb") as wh:
        wh.con.execute(
            "INSERT INTO dim_dataset_versions VALUES ('v1', 1, now(), [], 0, 0, 'h', 'r')"
        )
    assert main(["run", "--dataset", "v9", "--data-dir", str(warehouse)]) == 2
    err = _error(capsys)
    assert err.startswith("lilo: no dataset version 'v9'") and "known are v1;" in err
    assert "Traceback" not in err and "ValueError" not in err


@pytest.mark.parametrize("command", [SURVEY, ["demo"]])
def test_a_setting_that_needs_a_missing_extra_names_the_extra(
    tmp_path, capsys, monkeypatch, command
):
    """prefect-dask is the `dask` extra: without it, `runner.kind = "dask"` is one line
    naming the extra to install, before any work."""
    monkeypatch.setitem(sys.modules, "prefect_dask", None)  # as if not installed
    data = tmp_path / "data"
    assert main([*command, "--set", "runner.kind=dask", "--data-dir", str(data)]) == 2
    err = _error(capsys)
    assert 'runner.kind = "dask" needs the `dask` extra' in err and "'.[dask]'" in err
    assert not data.exists()


def test_a_data_dir_that_is_a_file(tmp_path, capsys):
    afile = tmp_path / "afile"
    afile.write_text("")
    assert main([*SURVEY, "--data-dir", str(afile)]) == 2
    assert "is a file: give the folder that holds lilo.duckdb" in _error(capsys)


def test_survey_ids_in_every_arxiv_form_are_taken_in_their_normal_form():
    given = ["2301.00001", "2301.00002v2", "astro-ph/9911436", "math.gt/0309136v1", "0704.0001"]
    settings = load_settings(None, {"surveys": given})
    assert settings.surveys == (
        "2301.00001",
        "2301.00002",
        "astro-ph/9911436",
        "math.GT/0309136",
        "0704.0001",
    )
    assert Settings().surveys == ()


# -- commands that read an existing warehouse --------------------------------------------


@pytest.mark.parametrize(
    "command",
    [
        ["review", "list"],
        ["review", "approve", "--sample", "S"],
        ["review", "export", "out.jsonl"],
        ["leaderboard"],
        ["failures"],
        ["stats"],
        ["run", "--dataset", "longinoutbench"],
    ],
    ids=" ".join,
)
def test_a_mistyped_data_dir_creates_no_warehouse(tmp_path, capsys, command):
    typo = tmp_path / "lilo-dta"
    assert main([*command, "--data-dir", str(typo)]) == 2
    assert f"no warehouse at {typo / 'lilo.duckdb'}" in _error(capsys)
    assert not typo.exists()


def test_approving_an_unknown_sample_or_pair_names_it_and_writes_nothing(warehouse, capsys):
    before = _counts(warehouse)
    common = ["--data-dir", str(warehouse)]
    assert main(["review", "approve", "--sample", "UNKNOWN", *common]) == 2
    assert "no sample UNKNOWN in dataset v1" in _error(capsys)
    assert main(["review", "reject", "deadbeef", "--reason", "r", *common]) == 2
    assert "no QA pair deadbeef in dataset v1" in _error(capsys)
    assert _counts(warehouse) == before


def test_leaderboard_without_results_exits_1(warehouse, capsys):
    assert main(["leaderboard", "--data-dir", str(warehouse)]) == 1
    assert "no published results in" in _error(capsys)


def test_ids_are_shown_as_unique_prefixes_and_taken_back():
    ids = ["0715105b17c0", "0715105c0000", "184f798aa", "25b7eb0ff"]
    assert _short(ids) == {
        "0715105b17c0": "0715105b",
        "0715105c0000": "0715105c",
        "184f798aa": "184f798",
        "25b7eb0ff": "25b7eb0",
    }
    settings = Settings()
    assert _resolve(["184f798", "0715105c"], ids, "QA pair", settings) == [ids[2], ids[1]]
    with pytest.raises(CLIError, match="ambiguous"):
        _resolve(["0715105"], ids, "QA pair", settings)


# -- per-command options, --debug --------------------------------------------------------


def test_each_command_lists_only_its_own_options(capsys):
    for command, runs_pipeline in (("demo", True), ("leaderboard", False), ("discover", False)):
        assert main([command, "--help"]) == 0
        out = capsys.readouterr().out
        assert ("--target-words" in out) is runs_pipeline  # discover builds samples only
        assert ("--publish-partial" in out) is runs_pipeline
        assert "--data-dir" in out and "--debug" in out
    for command in ("corpus", "mirror"):
        assert main([command, "--help"]) == 0
        assert "--config" in capsys.readouterr().out


@pytest.mark.parametrize("command", ["run", "demo"])
def test_publish_partial_reaches_the_settings_of_the_commands_that_materialize(
    tmp_path, monkeypatch, command
):
    import lilo.flows.cli.pipeline as pipeline

    seen: list[Settings] = []

    def stop(settings: Settings, *_: object) -> int:
        seen.append(settings)
        return 0

    monkeypatch.setattr(pipeline, "_run", stop)
    # A configured API (nothing listens): no temporary server is left running for the process.
    monkeypatch.setenv("PREFECT_API_URL", f"http://127.0.0.1:{_closed_port()}/api")
    if command == "demo":  # no corpus written, no mirror started
        monkeypatch.setattr(
            "lilo.tasks.synthetic.write_corpus", lambda *_, **__: SimpleNamespace(items=[])
        )
        monkeypatch.setattr("lilo.tasks.synthetic.Mirror", _NoMirror)
    argv = [*([command] if command == "demo" else SURVEY), "--data-dir", str(tmp_path / "d")]
    config = tmp_path / "config.toml"
    config.write_text("publish_partial = true\n")
    assert main([*argv, "--publish-partial"]) == 0
    assert main(argv) == 0
    assert main([*argv, "--config", str(config)]) == 0  # no flag leaves the file's value
    assert [s.publish_partial for s in seen] == [True, False, True]


def test_a_command_reports_to_the_api_configured_when_it_runs(tmp_path, monkeypatch):
    """A command that started Prefect's temporary server (no API configured then) leaves it
    running for the process; a later command, under an API configured since (a test
    harness), reports there, not to that server."""
    from prefect.settings import PREFECT_API_URL, temporary_settings

    from lilo.flows.cli import _server

    monkeypatch.setenv("PREFECT_HOME", str(tmp_path / "prefect"))  # the server's, a new one
    earlier = _server._PROCESS  # one an earlier command in this process started, kept
    try:
        with temporary_settings(restore_defaults={PREFECT_API_URL}):
            _server.start(tmp_path)
            assert _server._PROCESS is not None  # this process's temporary server runs
        with temporary_settings(updates={PREFECT_API_URL: "http://127.0.0.1:9/api"}):
            assert _server.wait() == ""  # the configured API, not the temporary server
    finally:
        if earlier is None:
            _server.stop()


class _NoMirror:
    api_url = eprint_url = base_url = "http://127.0.0.1:9/"

    def __init__(self, _: Path) -> None:
        pass

    def __enter__(self) -> _NoMirror:
        return self

    def __exit__(self, *_: object) -> None:
        pass


def test_debug_shows_the_traceback_and_keeps_the_exit_code(tmp_path, capsys):
    for argv in (["--debug", *SURVEY], [*SURVEY, "--debug"]):
        code = main([*argv, "--target-words", "5", "--data-dir", str(tmp_path / "data")])
        err = capsys.readouterr().err
        assert code == 2  # invalid settings, as without --debug
        assert "Traceback" in err and "ValidationError" in err
        assert err.strip().splitlines()[-1].startswith("lilo: invalid settings: ")


def test_each_lilo_error_carries_its_exit_code():
    from lilo.flows._preflight import PreflightError
    from lilo.flows.cli._errors import CLIError
    from lilo.flows.cli._main import _explain
    from lilo.tasks.config_loading import ConfigError
    from lilo.tasks.llm import LLMError
    from lilo.warehouse import WarehouseBusy

    assert _explain(ConfigError("bad file")) == ("bad file", 2)
    assert _explain(CLIError("no such sample", code=1)) == ("no such sample", 1)
    assert _explain(PreflightError("llm endpoint unreachable")) == ("llm endpoint unreachable", 1)
    assert _explain(WarehouseBusy("held")) == ("held", 1)
    message, code = _explain(LLMError("openai:m failed"))
    assert code == 1 and message.startswith("LLMError: openai:m failed (run again with --debug")
    assert _explain(KeyError("x"))[1] == 1


# -- unreachable endpoints ---------------------------------------------------------------


def test_an_unreachable_arxiv_fails_the_run_at_once(tmp_path, capsys, monkeypatch):
    # A configured Prefect API: a temporary server would keep its log under the data dir.
    monkeypatch.setenv("PREFECT_API_URL", f"http://127.0.0.1:{_closed_port()}/api")
    api = f"http://127.0.0.1:{_closed_port()}/api/query"
    data = tmp_path / "data"
    assert main([*SURVEY, "--set", f"arxiv.api_url={api}", "--data-dir", str(data)]) == 1
    err = _error(capsys)
    assert f"arXiv at {api} is unreachable" in err and "LILO_ARXIV__API_URL" in err
    assert not data.exists()


@pytest.mark.e2e  # `lilo run` in a subprocess, Prefect's temporary server started
@pytest.mark.slow
def test_a_run_that_fails_at_once_leaves_no_data_dir_for_prefect_s_temporary_server(tmp_path):
    """As a user runs it: no Prefect API configured, so lilo starts its temporary server,
    whose log is a temporary in the new data dir; the folders made for it go with it."""
    import os
    import subprocess

    api = f"http://127.0.0.1:{_closed_port()}/api/query"
    data = tmp_path / "data"
    env = {k: v for k, v in os.environ.items() if not k.startswith("PREFECT_API")}
    env["PREFECT_HOME"] = str(tmp_path / "prefect")
    done = subprocess.run(
        [sys.executable, "-m", "lilo.flows.cli", *SURVEY, "--set", f"arxiv.api_url={api}"]
        + ["--data-dir", str(data)],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 1, done.stdout + done.stderr
    assert f"arXiv at {api} is unreachable" in done.stderr
    assert not data.exists(), sorted(p.name for p in data.rglob("*"))


@pytest.mark.parametrize(("section", "instead"), [("llm", "offline"), ("embedding", "local")])
def test_an_unreachable_endpoint_fails_a_dataset_run_and_leaves_the_warehouse(
    warehouse, capsys, section, instead, prefect_harness
):
    """The message offers the section's backend that needs no server, a value it takes.
    (A command that runs flows starts Prefect's temporary server first, unless an API is
    configured: here the harness's.)"""
    url = f"http://127.0.0.1:{_closed_port()}/v1"
    with Warehouse(warehouse / "lilo.duckdb") as wh:  # the dataset exists: the endpoint fails
        wh.con.execute(
            "INSERT INTO dim_dataset_versions VALUES ('v1', 1, now(), [], 0, 0, 'h', 'r')"
        )
    before = _counts(warehouse)
    argv = ["run", "--dataset", "v1", "--data-dir", str(warehouse)]
    sets = [f"{section}.backend=openai", f"{section}.base_url={url}"]
    assert main([*argv, *(a for s in sets for a in ("--set", s))]) == 1
    error = _error(capsys)
    assert f"{section} endpoint {url}/ is unreachable" in error
    assert f"or use LILO_{section.upper()}__BACKEND={instead}" in error
    assert getattr(Settings().with_overrides({f"{section}.backend": instead}), section).backend
    assert _counts(warehouse) == before


def test_a_deployment_run_with_an_unreachable_endpoint_is_failed_in_prefect(
    tmp_path, prefect_harness
):
    """The flow checks too (a deployment has no CLI before it): its run ends `Failed`
    with the message, and nothing is written."""
    from prefect import get_client

    from lilo.flows._preflight import PreflightError
    from lilo.flows.pipeline import lilo_pipeline

    closed = f"http://127.0.0.1:{_closed_port()}/api/query"
    settings = Settings(data_dir=tmp_path / "data").with_overrides({"arxiv.api_url": closed})
    overrides = flow_parameters(settings)  # as the CLI hands its settings to its flows
    name = f"preflight-{tmp_path.name}"  # to find the run below
    with pytest.raises(PreflightError, match="arXiv at .* is unreachable"):
        lilo_pipeline.with_options(flow_run_name=name)(surveys=["2301.00001"], overrides=overrides)
    with get_client(sync_client=True) as client:
        runs = [r for r in client.read_flow_runs() if r.name == name]
    assert [r.state.type.value for r in runs] == ["FAILED"]
    assert "unreachable" in runs[0].state.message
    assert not (tmp_path / "data").exists()


def test_review_ui_prints_the_address_of_the_paused_run(capsys):
    from prefect.settings import PREFECT_API_URL, PREFECT_UI_URL, temporary_settings

    run = SimpleNamespace(id="0b5e")
    api = {PREFECT_API_URL: "http://127.0.0.1:4200/api"}
    with temporary_settings(updates={**api, PREFECT_UI_URL: None}):
        print_address(None, run, None)
    assert "http://127.0.0.1:4200/runs/flow-run/0b5e" in capsys.readouterr().out
    with temporary_settings(updates={**api, PREFECT_UI_URL: "https://ui.example/"}):
        print_address(None, run, None)
    assert "https://ui.example/runs/flow-run/0b5e" in capsys.readouterr().out


def test_review_list_fits_80_columns_and_takes_its_short_ids_back(warehouse, capsys):
    sample = Sample("5f3a9c1e" * 3, "v1", ("2601.00001",), "Kernels", "2601.00000", 40, "command")
    question = " ".join(["How does the RMSE reported for Passengers compare with the density?"] * 2)
    pairs = [
        QAPair(f"0715105{c}" + "e" * 16, sample.sample_id, "single", sample.paper_ids, question,
               "It is lower.", (), "pending", 1, "", "", "", "offline")
        for c in "ab"
    ]  # fmt: skip
    with Warehouse(warehouse / "lilo.duckdb") as wh:
        wh.upsert("dim_samples", [sample], ("sample_id",), extra={"run_id": "seed"})
        wh.upsert("fct_qa_pairs", pairs, ("qa_id",), extra={"run_id": "seed"})
    common = ["--data-dir", str(warehouse)]
    assert main(["review", "list", *common]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert max(map(len, lines)) <= 80
    assert sum("0715105a" in line and "5f3a9c1" in line for line in lines) == 1
    assert main(["review", "approve", "0715105a", "--reviewer", "ana", *common]) == 0
    assert f"approve  {pairs[0].qa_id}" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("command", "expected"),
    [
        (["run", "--dataset", "x", "--sample", "3"], "unrecognized arguments: --sample 3"),
        (["leaderboard", "--data-d", "/tmp/x"], "unrecognized arguments: --data-d"),
        (["review", "list", "--stat", "pending"], "unrecognized arguments: --stat"),
    ],
    ids=" ".join,
)
def test_options_are_never_abbreviated(capsys, command, expected):
    assert main(command) == 2
    assert expected in _error(capsys)


def test_survey_and_dataset_are_one_or_the_other(warehouse, capsys):
    assert main([*SURVEY, "--dataset", "v1", "--data-dir", str(warehouse)]) == 2
    assert "give one of them" in _error(capsys)


@pytest.mark.parametrize(
    ("command", "help_of"),
    [
        (["run", "--bogus"], "lilo run"),
        (["review", "list", "--bogus"], "lilo review list"),
        (["review", "--bogus"], "lilo review"),
        (["import", "lost-in-the-middle", "x", "--bogus"], "lilo import lost-in-the-middle"),
        (["--bogus", "run"], "lilo"),
    ],
    ids=lambda value: " ".join(value) if isinstance(value, list) else "",
)
def test_a_bad_option_points_at_its_command_s_help(capsys, command, help_of):
    assert main(command) == 2
    assert _error(capsys).endswith(f"unrecognized arguments: --bogus (see `{help_of} --help`)\n")


def _commands() -> list[tuple[list[str], object]]:
    """Every command's parser, by its words (`review list`), the top one first."""
    import argparse

    from lilo.flows.cli._main import _parser

    found = []

    def walk(parser: argparse.ArgumentParser, words: list[str]) -> None:
        found.append((words, parser))
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction):
                for name, sub in action.choices.items():
                    walk(sub, [*words, name])

    walk(_parser(), [])
    return found


def test_every_command_and_option_says_what_it_is():
    missing = []
    for words, parser in _commands():
        if words and not parser.description:
            missing.append(f"lilo {' '.join(words)}: no description")
        for action in parser._actions:
            if action.help is None and action.choices is None:  # a list of commands aside
                missing.append(
                    f"lilo {' '.join(words)} {'/'.join(action.option_strings) or action.dest}"
                )
    assert missing == []


def test_one_name_per_idea_in_every_command():
    """A dataset version is --dataset, target lengths --target-words, a sample count
    --samples (a limit) or --target-samples (a goal), wherever a command takes them."""
    others = {"--dataset-version", "--lengths", "--words", "--target", "--version"}
    for words, parser in _commands():
        shown = {o for a in parser._actions if a.help != "==SUPPRESS==" for o in a.option_strings}
        assert not shown & others, (words, shown & others)
        if words[:1] == ["import"] and len(words) == 2:  # a clone, named so in its help
            assert "CLONE" in (parser.description or ""), words
            assert {a.metavar for a in parser._actions if a.dest == "path"} == {"CLONE"}


@pytest.mark.parametrize(
    ("command", "dest", "value", "note"),
    [
        (["stats", "--dataset-version", "v2"], "dataset", "v2",
         "--dataset-version is now --dataset"),
        (["discover", "--target", "5"], "target_samples", 5, "--target is now --target-samples"),
        (["show", "s", "--words", "4000"], "length", 4000, "--words is now --target-words"),
        (["reproduce", "ral-writer", "--lengths", "1000,2000"], "lengths", [1000, 2000],
         "--lengths is now --target-words"),
    ],
    ids=["stats", "discover", "show", "reproduce"],
)  # fmt: skip
def test_an_old_name_is_still_taken_and_says_what_it_became(capsys, command, dest, value, note):
    from lilo.flows.cli._main import _parser

    args = _parser().parse_args(command)
    assert getattr(args, dest) == value
    assert capsys.readouterr().err == f"lilo: {note}; taken as {note.rsplit(' ', 1)[1]}\n"


@pytest.mark.parametrize(
    "command",
    [
        ["review", "--reviewer", "carol", "list"],
        ["review", "--reviewer", "carol", "export", "out.jsonl"],
        ["review", "--reviewer", "carol", "report"],
        ["review", "--sample", "s", "reject", "q", "--reason", "r"],
        ["review", "--reviewer", "carol", "agreement"],
    ],
    ids=" ".join,
)
def test_an_option_an_action_does_not_use_is_refused_not_ignored(warehouse, capsys, command):
    assert main([*command, "--data-dir", str(warehouse)]) == 2
    assert "does not apply to `lilo review" in _error(capsys)
    option = command[1]
    action = command[3]
    assert main(["review", action, *command[4:], option, command[2], "--data-dir",
                 str(warehouse)]) == 2  # fmt: skip
    assert f"unrecognized arguments: {option}" in _error(capsys)


def test_datasets_lists_each_dataset_version_with_its_samples_and_results(warehouse, capsys):
    from datetime import UTC, datetime

    with Warehouse(warehouse / "lilo.duckdb") as wh:
        wh.upsert(
            "dim_dataset_versions",
            [{"dataset_version": name, "number": i, "surveys": surveys, "n_samples": n,
              "n_papers": 3 * n, "config_hash": "h",
              "created_at": datetime(2026, 1, i, tzinfo=UTC).replace(tzinfo=None)}
             for i, (name, surveys, n) in enumerate(
                 [("v1", ["2301.00001"], 4), ("longinoutbench", [], 120)], 1)],
            ("dataset_version",),
            extra={"run_id": "seed"},
        )  # fmt: skip
    assert main(["datasets", "--data-dir", str(warehouse)]) == 0
    out = capsys.readouterr().out
    rows = [line for line in out.splitlines() if "│" in line and "dataset" not in line]
    assert [r.split("│")[1].strip() for r in rows] == ["v1", "longinoutbench"]
    assert "imported" in rows[1] and "120" in rows[1] and "none yet" in rows[0]
    assert "lilo run --dataset NAME" in out


@pytest.mark.parametrize(
    ("command", "expected"),
    [
        (["report", "--version", "3"], "--version is now --result-version (a result version)"),
        (["stats", "--version", "v1"], "--version is now --dataset (a dataset version)"),
        (["leaderboard", "--version", "1"], "--version is now --result-version (a result version)"),
    ],
    ids=" ".join,
)
def test_the_two_versions_are_named_for_what_they_are(capsys, command, expected):
    assert main(command) == 2
    assert expected in _error(capsys)


def test_an_endpoint_set_for_an_offline_backend_is_said_once(tmp_path, caplog):
    """`llm.base_url` with the offline engine is not used: the run says so, not silently."""
    from lilo.flows._preflight import check_endpoints

    settings = Settings(data_dir=tmp_path).with_overrides({"llm.base_url": "http://x/v1"})
    with caplog.at_level("WARNING", logger="lilo"):
        check_endpoints(settings, arxiv=False)
    said = [r.getMessage() for r in caplog.records if "is not used" in r.getMessage()]
    assert said == [
        "llm.base_url http://x/v1 is not used: llm.backend is offline (set "
        "LILO_LLM__BACKEND=openai to use the endpoint)"
    ]


def test_only_a_settings_models_validation_error_is_called_invalid_settings():
    """A settings value out of range is bad input (exit 2, "invalid settings"); another
    model's validation error is lilo's own failure (exit 1), never labelled as settings."""
    from pydantic import ValidationError

    from lilo.flows.cli._main import _explain
    from lilo.tasks.config import SampleSettings
    from lilo.tasks.qa import FileVerdict

    with pytest.raises(ValidationError) as settings_error:
        SampleSettings(papers_per_sample=1)
    message, code = _explain(settings_error.value)
    assert code == 2 and message.startswith("invalid settings: papers_per_sample = 1: ")
    with pytest.raises(ValidationError) as other:
        FileVerdict(qa_id="q1", paper_ids=[{"x": 1}])
    message, code = _explain(other.value)
    assert code == 1 and "invalid settings" not in message and "FileVerdict" in message


def test_a_warehouse_file_of_random_bytes_is_named_not_a_warehouse_and_left_alone(tmp_path, capsys):
    """`lilo datasets`, `lilo stats` and a run's opening of the warehouse say the file is
    not a lilo warehouse and what to do (exit 2), never "no dataset versions"; the file is
    left byte for byte."""
    from lilo.warehouse import open_warehouse

    data = tmp_path / "data"
    data.mkdir()
    junk = bytes(random.Random(54).randrange(256) for _ in range(64 * 1024))
    (data / "lilo.duckdb").write_bytes(junk)
    for command in (["datasets"], ["stats"]):
        code = main([*command, "--data-dir", str(data)])
        err = capsys.readouterr().err
        assert code == 2, err
        assert err == (
            f"lilo: {data / 'lilo.duckdb'} is not a lilo warehouse (not a DuckDB database "
            "file), left as it is: move it away, or pass the --data-dir that holds lilo's "
            "lilo.duckdb\n"
        )
    with pytest.raises(InputError, match="is not a lilo warehouse"):
        open_warehouse(Settings(data_dir=data).db_path, 0)
    assert (data / "lilo.duckdb").read_bytes() == junk


def test_an_openai_backend_with_neither_key_nor_endpoint_is_one_line_exit_2(
    tmp_path, capsys, monkeypatch, prefect_harness
):
    """Settings the user fixes: lilo's one line, not a Python type name with exit 1."""
    for name in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "LILO_LLM__API_KEY", "LILO_LLM__BASE_URL"):
        monkeypatch.delenv(name, raising=False)
    args = ["probe", "kv", "--keys", "10", "--positions", "0", "--examples", "1"]
    code = main([*args, "--set", "llm.backend=openai", "--data-dir", str(tmp_path / "d")])
    err = capsys.readouterr().err
    assert code == 2, err
    assert "lilo: llm.backend=openai needs a key or an endpoint: set LILO_LLM__API_KEY" in err
    assert "ValueError" not in err


# -- settings found wrong only when a stage reaches them: lilo's line, not a type name ---


@pytest.mark.e2e
@pytest.mark.slow  # lilo in a subprocess, with Prefect's temporary server
@pytest.mark.skipif(sys.platform == "darwin", reason="an MPS device may be there")
@pytest.mark.parametrize(
    ("env", "expected"),
    [
        (
            {"LILO_EMBEDDING__BACKEND": "openai"},
            "lilo: embedding.base_url unset: set LILO_EMBEDDING__BASE_URL to an "
            "OpenAI-compatible server",
        ),
        (
            {"LILO_EMBEDDING__DEVICE": "mps"},
            "lilo: embedding.device=mps but torch sees no MPS device here: "
            "set LILO_EMBEDDING__DEVICE=auto (or cpu)",
        ),
    ],
    ids=["embedding-endpoint", "embedding-device"],
)
def test_an_embedding_setting_a_stage_refuses_is_lilo_s_line_and_exit_2(
    tmp_path, used_prefect_home, env, expected
):
    """Once `lilo: ValueError: ... (run again with --debug ...)`, exit 1: now the line
    alone, exit 2, as any other bad setting."""
    lilo = Path(sys.executable).parent / "lilo"
    done = subprocess.run(
        [str(lilo), "demo", "--data-dir", str(tmp_path / "data")],
        env={**os.environ, **env, "PREFECT_HOME": str(used_prefect_home(tmp_path / "prefect"))},
        capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    last = done.stderr.strip().splitlines()[-1]
    assert done.returncode == 2, done.stderr[-2000:]
    assert last.startswith(expected), last
    assert "ValueError" not in last and "--debug" not in last
    assert "Traceback" not in done.stderr
