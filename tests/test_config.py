import json
from pathlib import Path

import pytest
from pydantic import ValidationError

from lilo.tasks.config import ConfigError, Settings, load_settings


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


def test_flow_parameters_never_carry_the_api_key_nor_write_the_environment():
    import os

    before = dict(os.environ)
    settings = Settings().with_overrides({"llm.api_key": "sk-secret", "llm.backend": "openai"})
    parameters = settings.flow_parameters()
    assert "sk-secret" not in json.dumps(parameters)
    assert dict(os.environ) == before  # no key moved into the environment
    # the flow, run in this process, resolves the reference back to the key
    assert load_settings(None, parameters).llm.key() == "sk-secret"
    assert settings.secret_values() == ["sk-secret"]


def test_a_key_reference_from_another_process_says_where_to_set_the_key():
    with pytest.raises(ValidationError, match="LILO_<SECTION>__API_KEY"):
        Settings().with_overrides({"llm.api_key": "lilo-key:0123456789abcdef"})


def _lines_run_reading(config: Path) -> int:
    """Lines of tasks/config.py executed while a file with errors is read (its errors
    reported): a count of work that does not depend on the machine's speed."""
    import sys

    import lilo.tasks.config as module

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
