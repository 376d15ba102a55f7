import json
from pathlib import Path

import pytest

from lilo.tasks.config import Role, Settings, walk_fields
from lilo.tasks.config_loading import (
    ConfigError,
    ParameterRefused,
    flow_parameters,
    load_settings,
    run_settings,
)
from lilo.tasks.errors import LiloError


def test_priority_defaults_file_environment_overrides(tmp_path, monkeypatch):
    config = tmp_path / "lilo.toml"
    config.write_text('[llm]\nmodel = "from-file"\ntemperature = 0.5\n[qa]\nreview = "manual"\n')
    monkeypatch.setenv("LILO_LLM__MODEL", "from-env")

    settings = load_settings(config, {"qa.review": "auto"})

    assert settings.llm.temperature == 0.5  # file beats default
    assert settings.llm.model == "from-env"  # environment beats file
    assert settings.qa.review == "auto"  # overrides beat everything


def test_config_hash_ignores_paths_endpoints_and_secrets():
    base = Settings()
    moved = base.with_overrides(
        {
            "data_dir": Path("/elsewhere"),
            "arxiv.api_url": "http://127.0.0.1:1/api/query",
            "llm.api_key": "sk-secret",
            "arxiv.delay_s": 0.0,
            "qa.review_batch": 3,
        }
    )
    changed = base.with_overrides({"generate.ral.k": 8})
    assert moved.config_hash() == base.config_hash()
    assert changed.config_hash() != base.config_hash()
    assert "sk-secret" not in moved.model_dump_json()
    assert moved.llm.key() == "sk-secret" and "sk-secret" not in repr(moved)


def test_flow_parameters_carry_no_folder_endpoint_or_key_nor_write_the_environment():
    import os

    before = dict(os.environ)
    settings = Settings().with_overrides(
        {"llm.api_key": "sk-secret", "llm.backend": "openai", "data_dir": "/srv/lilo"}
    )
    parameters = flow_parameters(settings)
    assert "sk-secret" not in json.dumps(parameters) and "/srv/lilo" not in json.dumps(parameters)
    assert dict(os.environ) == before  # no key moved into the environment
    # the flow, run in this process, resolves the references back to the values
    assert run_settings(parameters) == settings
    assert run_settings(parameters).llm.key() == "sk-secret"
    assert settings.secret_values() == ["sk-secret"]


PLACES = [name for name, role in walk_fields(Settings) if role in (Role.PLACE, Role.SECRET)]


@pytest.mark.parametrize("name", PLACES)
def test_a_run_s_parameters_never_set_a_folder_an_endpoint_or_a_key(name):
    """Whatever the value (a path, an address, a key, nothing, a reference another process
    made), dotted, nested or swept."""
    *parents, leaf = name.split(".")
    nested: dict = {leaf: None}
    for part in reversed(parents):
        nested = {part: nested}
    for given in (
        {name: "lilo-held:0123456789abcdef"},
        {name: None},
        nested,
        {"generate.sweep": {name: ["x", "y"]}},
    ):
        with pytest.raises(ParameterRefused, match=r"^a run's parameters may not set "):
            run_settings(given)


def test_a_run_s_parameters_shape_the_run():
    shaped = run_settings(
        {
            "surveys": ["2301.00001"],
            "generate.methods": ["single"],
            "generate.target_words": [4000],
            "generate.samples": 2,
            "generate.ral": {"k": 8},
            "llm.model": "gpt-4o-mini",
            "qa.review": "manual",
        }
    )
    assert shaped.surveys == ("2301.00001",) and shaped.generate.ral.k == 8
    assert {"runner.dask_address", "data_dir", "llm.base_url", "llm.api_key"} <= set(PLACES)


def _lines_run_reading(config: Path) -> int:
    """Lines of tasks/config_loading.py executed while a file with errors is read (its errors
    reported): a count of work that does not depend on the machine's speed."""
    import sys

    import lilo.tasks.config_loading as module

    count = 0

    def trace(frame, event, arg):
        nonlocal count
        if frame.f_code.co_filename != module.__file__:
            return None
        if event == "line":
            count += 1
        return trace

    sys.settrace(trace)
    try:
        with pytest.raises(module.ConfigError):
            load_settings(config)
    finally:
        sys.settrace(None)
    return count


def test_a_config_file_s_errors_are_reported_in_linear_time(tmp_path):
    """Each unknown key is an error naming its line; twice the keys is twice the work, not
    four times (the line of each error was found by reading the file again: 20,000 unknown
    keys took minutes)."""
    counts = []
    for n in (300, 600):
        config = tmp_path / f"lilo-{n}.toml"
        unknown = "".join(f"unknown_{i} = {i}\n" for i in range(n))
        config.write_text("[llm]\nmodel = 'm'\n" + unknown)
        counts.append(_lines_run_reading(config))
    assert counts[1] < 2.5 * counts[0], counts
    with pytest.raises(ConfigError, match=r"lilo-600.toml:602: llm.unknown_599: Extra inputs"):
        load_settings(tmp_path / "lilo-600.toml")


def test_code_names_a_setting_through_the_model_not_a_dotted_string():
    """The command line's options name their settings as `lambda s: s.generate.target_words`
    (flows/cli/_settings.py): the path is read off the model, and what is not a setting is
    refused when named, not carried along as a string that validation rejects later."""
    from lilo.tasks.config_loading import setting_path

    assert setting_path(lambda s: s.generate.target_words) == "generate.target_words"
    assert setting_path(lambda s: s.probe.kv_keys) == "probe.kv_keys"
    assert setting_path(lambda s: s.data_dir) == "data_dir"
    for wrong in (lambda s: s.generate.target_word, lambda s: s.generate, lambda s: 3):
        with pytest.raises(LiloError, match="is not a setting"):
            setting_path(wrong)
