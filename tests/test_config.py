import json
from pathlib import Path

from tasks.config import Settings, load_settings


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
    assert moved.llm.api_key == "sk-secret"


def test_flow_parameters_never_carry_the_api_key(monkeypatch):
    monkeypatch.setenv("LILO_LLM__API_KEY", "")  # restored (unset) after the test
    settings = Settings().with_overrides({"llm.api_key": "sk-secret", "llm.backend": "openai"})
    parameters = settings.flow_parameters()
    assert "sk-secret" not in json.dumps(parameters)
    # the flow, run in this process, loads the key back from the environment
    assert load_settings(None, parameters).llm.api_key == "sk-secret"
