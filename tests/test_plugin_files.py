"""A plug-in is one file (docs/contributing.md): a method and a scorer, each written as one
file into its package's folder the way a contributor adds one, are on the leaderboard after
a real run (the view and `lilo leaderboard`), in `lilo run --methods`, in what each
generation records of its settings (`method_args`) and in the docs' generated tables. The
method's own settings section (`generate.lead`) is in its file too, and is set as every
setting is: a config file, a LILO_* variable, `--set`.

The files go into a temporary folder on the packages' search path (`__path__`, which the
registry walks as it walks the package's own folder), so the working tree is never written."""

from __future__ import annotations

import importlib
import json
import sys
from pathlib import Path

import duckdb
import pytest
from conftest import copy_imported_longinoutbench

import lilo.tasks.methods as methods_package
import lilo.tasks.scoring as scoring_package
from lilo.flows import doc_tables
from lilo.flows.cli import main
from lilo.tasks.config import METHOD_SECTIONS, Section
from lilo.tasks.config_loading import ConfigError, load_settings
from lilo.tasks.errors import LiloError
from lilo.tasks.methods import available_methods
from lilo.tasks.methods.base import _METHODS, method
from lilo.tasks.registry import PluginFailed
from lilo.tasks.scoring import available_scorers, get_scorer
from lilo.tasks.scoring.base import _SCORERS

METHOD = '''"""Lead: the papers' first words, as many as asked, in the order read; no model call."""

from __future__ import annotations

from typing import Any

from pydantic import Field

from lilo.tasks.config import Section, output_values
from lilo.tasks.methods.base import Draft, MethodSettings, Run, Writer, method


class LeadSettings(Section):
    """The share of the target length taken from the papers' first words."""

    share: float = Field(0.5, gt=0.0, le=1.0)


def _args(s: MethodSettings[LeadSettings]) -> dict[str, Any]:
    return output_values(s.own)


@method("lead", args=_args, settings=LeadSettings)
def lead(share: float) -> Writer:
    def write(run: Run) -> Draft:
        words = " ".join(p.text for p in run.papers).split()
        return Draft(" ".join(words[: int(run.target_words * share)]))

    return write
'''

SCORER = '''"""Brevity S_b: 100 at or under the target length, its share of the words above."""

from __future__ import annotations

from lilo.tasks.records import ScoreRow
from lilo.tasks.scoring.base import ScoreContext, Scored, scorer
from lilo.tasks.text import count_words


@scorer("brevity", label="S_b", order=4, about="brevity: 100 at or under the target")
def brevity(ctx: ScoreContext) -> Scored:
    generation = ctx.generation
    words = count_words(generation.text)
    value = 100.0 if words <= generation.target_words else 100.0 * generation.target_words / words
    return Scored([ScoreRow(generation.generation_id, "brevity", value, {"words": words})])
'''


@pytest.fixture
def plugins(tmp_path, monkeypatch):
    """`lead.py` in the methods' folder and `brevity.py` in the scorers', found afresh."""
    available_methods(), available_scorers()  # the shipped plug-ins, found first
    monkeypatch.setattr(METHOD_SECTIONS, "_entries", dict(METHOD_SECTIONS._entries))
    monkeypatch.setattr(METHOD_SECTIONS, "_discovered", False)
    added = []
    for package, registry, name, text in (
        (methods_package, _METHODS, "lead", METHOD),
        (scoring_package, _SCORERS, "brevity", SCORER),
    ):
        folder = tmp_path / "plugins" / package.__name__
        folder.mkdir(parents=True)
        (folder / f"{name}.py").write_text(text)
        monkeypatch.setattr(package, "__path__", [*package.__path__, str(folder)])
        monkeypatch.setattr(registry, "_entries", dict(registry._entries))
        monkeypatch.setattr(registry, "_discovered", False)
        added.append(f"{package.__name__}.{name}")
    importlib.invalidate_caches()
    yield
    for module in added:
        sys.modules.pop(module, None)


def _sql(data: Path, query: str) -> list[tuple]:
    con = duckdb.connect(str(data / "published" / "lilo.duckdb"), read_only=True)
    try:
        return con.execute(query).fetchall()
    finally:
        con.close()


def test_a_method_and_a_scorer_are_one_file_each(
    plugins, tmp_path, capsys, imported_longinoutbench
):
    data = copy_imported_longinoutbench(imported_longinoutbench, tmp_path)
    run = ["run", "--dataset", "longinoutbench", "--samples", "1", "--data-dir", str(data)]
    run += ["--target-words", "1000", "--set", "judge.backend=offline"]

    # --methods: named in its help, refused with the known ones listed when misspelt.
    assert main(["run", "--help"]) == 0
    assert "known: agentwrite, compress, lead," in " ".join(capsys.readouterr().out.split())
    assert main([*run, "--methods", "laed"]) != 0
    assert "known are agentwrite, compress, lead," in capsys.readouterr().err
    # Its own settings: a misspelt one refused, naming it, before anything runs.
    assert main([*run, "--methods", "lead", "--set", "generate.lead.shar=0.4"]) != 0
    assert "generate.lead.shar" in capsys.readouterr().err
    assert main([*run, "--methods", "single,lead", "--set", "generate.lead.share=0.4"]) == 0
    capsys.readouterr()

    # The leaderboard view: a row per method, the scorer's column beside S_l, S_c, S_q.
    rows = _sql(data, "SELECT variant, s_l, s_b, overall_s_b, scored, expected FROM leaderboard")
    board = {r[0]: r[1:] for r in rows}
    assert set(board) == {"single", "lead"}
    assert 20 < board["lead"][0] < 40  # about 400 words of 1,000 (S_l 28)
    assert board["lead"][1] == board["lead"][2] == 100.0
    assert board["lead"][3:] == (1, 1)
    # What made each summary: the method's own parameters, recorded.
    args = _sql(data, "SELECT method_args FROM fct_generations WHERE method = 'lead'")
    assert [json.loads(a) for (a,) in args] == [{"share": 0.4}]

    # `lilo leaderboard`: the method's row and the score's column.
    assert main(["leaderboard", "--data-dir", str(data), "--format", "csv"]) == 0
    header, *lines = capsys.readouterr().out.splitlines()
    assert "s_b" in header.split(",") and any(",lead," in line for line in lines)
    assert main(["leaderboard", "--data-dir", str(data), "--format", "markdown"]) == 0
    out = capsys.readouterr().out
    assert "| 1k S_q | 1k S_b | 1k S_copy | 1k n |" in out and "| lead |" in out

    # The docs' generated tables.
    catalog = (Path(__file__).resolve().parent.parent / "docs" / "catalog.md").read_text()
    tables = doc_tables.render(catalog)
    assert "| `lead` | - | share=`0.5` |" in tables
    assert "| `generate.lead.share` | `0.5` | output |" in tables
    assert "| `brevity` | S_b | `s_b`, `overall_s_b` | brevity: 100 at or under the target |" in (
        tables
    )


def test_a_method_s_own_settings_are_set_as_every_setting_is(plugins, tmp_path, monkeypatch):
    """`[generate.lead]` in a config file, LILO_GENERATE__LEAD__SHARE, an override; a key or
    a section the method does not have is refused, saying which and where."""
    config = tmp_path / "lilo.toml"
    config.write_text("[generate.lead]\nshare = 0.25\n")
    assert load_settings(config).generate.section("lead").share == 0.25
    monkeypatch.setenv("LILO_GENERATE__LEAD__SHARE", "0.75")
    assert load_settings(config).generate.lead.share == 0.75  # the environment beats the file
    assert load_settings(config, {"generate.lead.share": 0.3}).generate.lead.share == 0.3
    monkeypatch.delenv("LILO_GENERATE__LEAD__SHARE")
    config.write_text("[generate.lead]\nshare = 2\n\n[generate.laed]\nshare = 0.5\n")
    with pytest.raises(ConfigError) as refused:
        load_settings(config)
    assert str(refused.value) == (
        f"{config}:2: generate.lead.share: Input should be less than or equal to 1; "
        f"{config}:4: generate.laed: Extra inputs are not permitted"
    )


def test_a_method_section_may_not_take_a_setting_s_name():
    with pytest.raises(LiloError, match=r"generate.samples is a setting of generation"):
        method("clash", args=dict, settings=Section, section="samples")(lambda: None)


EXTERNAL = '''"""Half: the papers' first words, half the target length; no model call."""

from lilo.tasks.methods.base import Draft, Run, Writer, method


@method("half", args=lambda settings: {})
def half() -> Writer:
    def write(run: Run) -> Draft:
        words = " ".join(p.text for p in run.papers).split()
        return Draft(" ".join(words[: run.target_words // 2]))

    return write
'''


@pytest.fixture
def installed(tmp_path, monkeypatch):
    """A distribution `lilo-ext` on sys.path as pip would leave it (a module and its
    `.dist-info` with METADATA and entry_points.txt): the method `half`, and a scorer whose
    module is missing; the registries found afresh."""
    site = tmp_path / "site"
    info = site / "lilo_ext-0.1.dist-info"
    info.mkdir(parents=True)
    (site / "lilo_ext.py").write_text(EXTERNAL)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: lilo-ext\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text(
        "[lilo.methods]\nhalf = lilo_ext\n\n[lilo.scorers]\nbroken = lilo_ext_gone\n"
    )
    available_methods(), available_scorers()
    for registry in (_METHODS, METHOD_SECTIONS, _SCORERS):
        monkeypatch.setattr(registry, "_entries", dict(registry._entries))
        monkeypatch.setattr(registry, "_failed", {})
        monkeypatch.setattr(registry, "_discovered", False)
    monkeypatch.syspath_prepend(str(site))
    yield
    sys.modules.pop("lilo_ext", None)


def test_an_installed_package_adds_a_method_by_its_entry_point(
    installed, tmp_path, capsys, caplog, imported_longinoutbench
):
    assert "half" in available_methods()
    # A plug-in that fails to load: one line naming package and entry point, and the rest runs.
    assert "broken" not in available_scorers()
    failed = "plug-in 'broken' of package lilo-ext (entry point lilo.scorers: lilo_ext_gone)"
    assert failed in caplog.text
    with pytest.raises(PluginFailed, match=r"failed to load: .*fix or uninstall lilo-ext"):
        get_scorer("broken")

    data = copy_imported_longinoutbench(imported_longinoutbench, tmp_path)
    run = ["run", "--dataset", "longinoutbench", "--samples", "1", "--data-dir", str(data)]
    run += ["--target-words", "1000", "--set", "judge.backend=offline", "--methods", "half"]
    assert main(run) == 0
    rows = _sql(data, "SELECT variant, s_l, scored FROM leaderboard")
    assert [r[0] for r in rows] == ["half"] and 20 < rows[0][1] < 60 and rows[0][2] == 1
    assert main(["leaderboard", "--data-dir", str(data), "--format", "csv"]) == 0
    assert any(",half," in line for line in capsys.readouterr().out.splitlines())
