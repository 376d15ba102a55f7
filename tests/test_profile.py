"""`--profile paper` (setting `profile`): the paper's Table 2 setting in one word, applied
under every explicitly given setting (file, LILO_* variable, --set, flow overrides)."""

from __future__ import annotations

from lilo.flows.cli import _settings
from lilo.flows.cli._main import _parser
from lilo.tasks.config import Settings
from lilo.tasks.config_loading import PROFILES, flow_parameters, load_settings, run_settings


def test_paper_profile_sets_the_table_2_setting(tmp_path):
    plain = load_settings(None, {"data_dir": str(tmp_path)})
    paper = load_settings(None, {"data_dir": str(tmp_path), "profile": "paper"})
    assert plain.judge.backend is None and plain.judge.checklist_temperature == 0.0
    assert (paper.judge.backend, paper.judge.model) == ("openai", "gpt-4o-mini")
    assert paper.judge.temperature == 0.0 and paper.judge.checklist_temperature == 0.8
    assert paper.llm.temperature == 0.3
    assert paper.generate.target_words == (4000, 8000, 16000)
    assert (paper.generate.ral.a, paper.generate.ral.b, paper.generate.ral.k) == (60.0, 0.3, 12)
    assert paper.config_hash() != plain.config_hash()
    # the label itself changes nothing that is computed
    same = plain.with_overrides({k: v for k, v in PROFILES["paper"].items()})
    assert same.config_hash() == paper.config_hash()


def test_explicit_settings_win_over_the_profile(tmp_path, monkeypatch):
    config = tmp_path / "lilo.toml"
    config.write_text('profile = "paper"\n[judge]\nmodel = "gpt-4o"\n')
    monkeypatch.setenv("LILO_JUDGE__CHECKLIST_TEMPERATURE", "0.5")
    settings = load_settings(config, {"generate.target_words": [4000], "data_dir": str(tmp_path)})
    assert settings.profile == "paper"
    assert settings.judge.model == "gpt-4o"  # the file
    assert settings.judge.checklist_temperature == 0.5  # the environment
    assert settings.generate.target_words == (4000,)  # the override
    assert settings.judge.backend == "openai" and settings.judge.temperature == 0.0


def test_a_flow_run_keeps_the_profile_settings_it_was_given(tmp_path):
    """A flow's overrides are every setting (Settings.flow_parameters): applying them again
    in the flow changes nothing, even values set against the profile."""
    given = load_settings(None, {"profile": "paper", "judge.checklist_temperature": 0.0})
    again = run_settings(flow_parameters(given))
    assert again == given and again.judge.checklist_temperature == 0.0
    deployment = run_settings({"profile": "paper"})  # a deployment's parameters
    assert deployment.judge.model == "gpt-4o-mini"


def test_cli_profile_option(tmp_path):
    args = _parser().parse_args(
        ["run", "--dataset", "x", "--profile", "paper", "--set", "judge.backend=offline"]
    )
    settings = _settings.settings_from_args(args)
    assert settings.profile == "paper" and settings.judge.backend == "offline"
    assert settings.judge.model == "gpt-4o-mini" and Settings().profile == "none"
