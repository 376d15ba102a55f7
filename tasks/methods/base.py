"""Generation methods as plug-ins (docs/design.md §7; the shape of inspect_ai's `@solver`).

A method is a factory marked `@method("name", args=..., settings=...)`: its keyword
arguments are the method's parameters and it returns a `Writer` (a function of one `Run`).
`settings` is the method's own section of the settings (`generate.<section>`), a model in
its file; `args` reads the parameters from that section and the few others a method reads
(`MethodSettings`). The registry keeps the name and the arguments, so every `Generation`
says what made it (`method_args`) and its id changes whenever they do. The registry is
lilo's one plug-in shape (tasks/registry.py): modules in `tasks/methods/` are discovered
once, so adding a method, its settings included, is one new file.
"""

from __future__ import annotations

import functools
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Generic, Protocol, TypeVar

from lilo.tasks.config import (
    METHOD_SECTIONS,
    EmbeddingSettings,
    GenerateSettings,
    LLMSettings,
    Section,
)
from lilo.tasks.embeddings import Embedder
from lilo.tasks.errors import LiloError, UnknownName
from lilo.tasks.llm import LLMClient
from lilo.tasks.methods._fit import Cut, fit_papers, reserved
from lilo.tasks.methods._prompts import templates_fingerprint
from lilo.tasks.prompt_packs import PromptPack
from lilo.tasks.records import Generation, LLMCall, PaperText, Sample, content_id
from lilo.tasks.redact import redacted
from lilo.tasks.registry import Registry
from lilo.tasks.text import count_words

__all__ = [
    "Draft",
    "Method",
    "MethodError",
    "MethodSettings",
    "Run",
    "Unit",
    "Writer",
    "available_methods",
    "get_method",
    "method",
]


class MethodError(LiloError):
    """A method could not produce a summary (e.g. an unusable plan)."""


@dataclass(frozen=True)
class Draft:
    """What a writer produces; `Method.run` wraps it into a `Generation`. `structure` is
    a method's intermediate structure (clusters and path, outline and dependencies,
    skeleton and edits), stored so an analyst can see why the text came out as it did."""

    text: str
    plan: tuple[str, ...] = ()
    restated: tuple[dict[str, Any], ...] = ()
    structure: dict[str, Any] = field(default_factory=dict)


@dataclass
class _Tally:
    """The tokens and calls of one run, summed as each call returns: the run keeps no call
    (their requests are long prompts) unless `keep` asks it to hand them on."""

    keep: bool
    tokens_in: int = 0
    tokens_out: int = 0
    calls: int = 0
    cost: float | None = 0.0  # None once a call has no price
    kept: list[LLMCall] = field(default_factory=list)
    # The steps whose reply was cut at its output budget (`finish_reason` "length").
    truncated: list[str] = field(default_factory=list)
    # What fitting each prompt to the window left out (`generate.fit_input`).
    cuts: list[Cut] = field(default_factory=list)

    def fitted(self) -> dict[str, int]:
        """What the generation records of its fitted input: the most tokens and words one
        prompt left out of its papers, how many prompts were cut, and the window (0:
        unknown, nothing cut)."""
        return {
            "tokens_left_out": max((c.tokens for c in self.cuts), default=0),
            "words_left_out": max((c.words for c in self.cuts), default=0),
            "prompts_cut": sum(c.tokens > 0 for c in self.cuts),
            "window": max((c.window for c in self.cuts), default=0),
        }

    def add(self, calls: list[LLMCall]) -> None:
        self.tokens_in += sum(c.tokens_in for c in calls)
        self.tokens_out += sum(c.tokens_out for c in calls)
        self.calls += len(calls)
        costs = [c.cost for c in calls]
        self.cost = (
            None if self.cost is None or None in costs else self.cost + sum(c or 0.0 for c in costs)
        )
        if self.keep:
            self.kept += calls


@dataclass(frozen=True)
class Run:
    """One method applied to one sample at one length, its papers in the order it reads
    them (`rotation` cyclic shifts of the sample's order). `tag` prefixes every call's
    purpose. `llm` is the run's own client (the caller's backend, cache, limits and call
    log): each call's tokens go into `tally` as it returns. `sampler` (the method variant)
    is part of each call's cache key: every method samples its own replies, as the
    reference's runs did, and a rerun replays them. `fit_input` (generate.fit_input): each
    prompt's copies of `texts` (the papers' texts, or what the method reads in their place)
    are cut to the window (tasks/methods/_fit.py)."""

    sample: Sample
    papers: list[PaperText]
    target_words: int
    llm: LLMClient
    embedder: Embedder
    pack: PromptPack
    tag: str
    tally: _Tally
    sampler: str = ""
    fit_input: str = "off"
    texts: tuple[str, ...] = ()

    def chat(
        self,
        prompt: str,
        step: str,
        *,
        temperature: float,
        max_tokens: int | None,
        attempt: int = 0,
        shared: bool = False,
    ) -> str:
        """`shared`: the reply every method asking this prompt gets (no sample of its own).
        A reply cut at its budget is kept, and its step marked in the generation's
        `structure` ("truncated")."""
        if self.fit_input != "off":
            prompt, cut = fit_papers(self.llm, prompt, self._texts(), max_tokens)
            self.tally.cuts.append(cut)
        try:
            reply = self.llm.complete(
                [{"role": "user", "content": prompt}],
                purpose=f"{self.tag}:{step}",
                temperature=temperature,
                max_tokens=max_tokens,
                attempt=attempt,
                sampler="" if shared else self.sampler,
            )
        finally:
            self.tally.add(self.llm.take_calls())
        if reply.truncated:
            self.tally.truncated.append(step)
        return reply.text

    def fits(self, prompt: str, max_tokens: int | None) -> bool:
        """Whether `prompt` as `chat` sends it fits the endpoint's window with its budget
        (with `fit_input` on: once its papers are cut, with the budget fitting reserves)."""
        if self.fit_input != "off":
            prompt, cut = fit_papers(self.llm, prompt, self._texts(), max_tokens)
            if not cut.fits:
                return False
            max_tokens = reserved(max_tokens, cut.window) if cut.window else max_tokens
        return self.llm.fits([{"role": "user", "content": prompt}], max_tokens)

    def _texts(self) -> tuple[str, ...]:
        return self.texts or tuple(p.text for p in self.papers)


Writer = Callable[[Run], Draft]


@dataclass(frozen=True)
class Unit:
    """One unit of generation work: a sample, its papers in the sample's order, a length,
    and how many places the papers are cyclically shifted (0: the sample's own order)."""

    sample: Sample
    papers: list[PaperText]
    target_words: int
    rotation: int = 0

    @property
    def ordered(self) -> list[PaperText]:
        r = self.rotation % max(len(self.papers), 1)
        return self.papers[r:] + self.papers[:r]


class Method(Protocol):
    @property
    def name(self) -> str: ...

    @property
    def args(self) -> dict[str, Any]: ...

    @property
    def variant(self) -> str: ...

    def generation_id(self, unit: Unit, llm: LLMClient, pack: PromptPack) -> str: ...

    def run(
        self, unit: Unit, llm: LLMClient, embedder: Embedder, pack: PromptPack
    ) -> Generation: ...


@dataclass(frozen=True)
class _Registered:
    name: str
    args: dict[str, Any]
    variant: str
    write: Writer = field(repr=False)
    # lilo's method templates the method renders on lilo's datasets (tasks/methods/templates/).
    templates: tuple[str, ...] = ()

    def generation_id(self, unit: Unit, llm: LLMClient, pack: PromptPack) -> str:
        """Everything that determines the summary: the papers' cleaned content in the order
        read, the method and its arguments, the length, the backbone and what else changes
        its output, and the dataset's prompts (on lilo's datasets: the method templates it
        renders, where it names them)."""
        parts: list[Any] = [
            unit.sample.sample_id,
            [p.content_sha256 for p in unit.ordered],
            self.name,
            self.args,
            unit.target_words,
            llm.backbone,
            llm.backend.fingerprint(),
        ]
        if pack.name != "lilo" or unit.rotation:
            parts += [pack.fingerprint(), unit.rotation]
        if pack.name == "lilo" and self.templates:  # lilo's pack holds no method template
            parts.append(templates_fingerprint(self.templates))
        return content_id(*parts)

    def run(self, unit: Unit, llm: LLMClient, embedder: Embedder, pack: PromptPack) -> Generation:
        """Never raises for a failed run: the error is recorded on the Generation so that a
        nightly fan-out keeps going and the failure stays visible in the warehouse."""
        sample, target_words = unit.sample, unit.target_words
        tag = self._tag(sample, target_words, unit.rotation)
        # The run's calls reach the caller's call log as they return; only a caller with no
        # log (a test, a bench) gets them back as records, from `llm.take_calls()`.
        own = llm.own()
        tally = _Tally(keep=llm.log is None)
        fit = self.args.get("fit_input", "off")
        run = Run(
            sample, unit.ordered, target_words, own, embedder, pack, tag, tally, self.variant, fit
        )
        started = time.perf_counter()
        try:
            draft, error = self.write(run), ""
        except Exception as exc:  # recorded, not raised (see docstring)
            draft, error = Draft(""), redacted(exc, llm.settings)  # may echo a key
        latency = time.perf_counter() - started
        llm.calls.extend(tally.kept)
        # A step cut at its budget is marked: the summary holds a reply that did not end.
        structure = {**draft.structure, "truncated": tally.truncated} if tally.truncated else {}
        if fit != "off":
            structure = {**(structure or draft.structure), "fit_input": tally.fitted()}
        return Generation(
            generation_id=self.generation_id(unit, llm, pack),
            sample_id=sample.sample_id,
            method=self.name,
            method_args=dict(self.args),
            variant=self.variant,
            rotation=unit.rotation,
            papers_read=tuple(p.paper_id for p in unit.ordered),
            target_words=target_words,
            backbone=llm.backbone,
            text=draft.text,
            words=count_words(draft.text),
            plan=draft.plan,
            restated=draft.restated,
            structure=structure or draft.structure,
            tokens_in=tally.tokens_in,
            tokens_out=tally.tokens_out,
            latency_s=round(latency, 6),
            llm_calls=tally.calls,
            error=error,
            cost=None if tally.cost is None else round(tally.cost, 6),
        )

    def _tag(self, sample: Sample, target_words: int, rotation: int) -> str:
        return f"generate:{self.variant}:{sample.sample_id}:{target_words}:{rotation}"


S = TypeVar("S", bound=Section | None)


@dataclass(frozen=True)
class MethodSettings(Generic[S]):
    """What a method's `args` reads: its own section (`generate.<section>`; None for a
    method without one), the generation settings, the backbone's and the embedder's."""

    own: S
    generate: GenerateSettings
    llm: LLMSettings
    embedding: EmbeddingSettings

    @property
    def embedder(self) -> str:
        """What embeds chunks and steps, as a method records it: a different retriever is
        a different method run."""
        return f"{self.embedding.backend}:{self.embedding.model}"


Args = Callable[[MethodSettings[Any]], dict[str, Any]]
Variant = Callable[[dict[str, Any]], str]
# An option named in brackets (`agentwrite[sees-written]`) -> the arguments it sets.
Options = dict[str, Args]


@dataclass(frozen=True)
class _Entry:
    build: Callable[..., Method]
    settings_args: Args
    section: str | None
    options: Options


_METHODS: Registry[_Entry] = Registry(
    "method", __package__, "add tasks/methods/{name}.py with @method({name!r}, args=...)"
)


def method(
    name: str,
    *,
    args: Args,
    settings: type[Section] | None = None,
    section: str | None = None,
    variant: Variant | None = None,
    options: Options | None = None,
    templates: tuple[str, ...] = (),
) -> Callable[[Callable[..., Writer]], Callable[..., Method]]:
    """Register a method factory under `name`; `args` reads its parameters from the
    `MethodSettings` (the factory's typed keyword parameters, recorded as `method_args`);
    `settings` is the model of the method's own section, set as `generate.<section>`
    (`section`: the method's name by default) in a config file, a LILO_GENERATE__* variable
    or `--set`; `variant` names what the leaderboard shows for a given set of arguments
    (e.g. the compressor Compress used), the method's name by default; `options` are the
    variants a run can name in brackets beside the default
    (`--methods agentwrite,agentwrite[sees-written]`), each setting some arguments;
    `templates` are lilo's method templates it renders on lilo's datasets, whose text is part
    of its generation ids there."""

    def decorate(factory: Callable[..., Writer]) -> Callable[..., Method]:
        @functools.wraps(factory)
        def build(**kwargs: Any) -> Method:
            label = variant(kwargs) if variant else name
            # generate.fit_input is every method's, applied by its Run: not the factory's.
            own = {k: v for k, v in kwargs.items() if k != "fit_input"}
            return _Registered(name, dict(kwargs), label, factory(**own), templates)

        key = None
        if settings:
            key = section or name
            if key in GenerateSettings.model_fields:
                raise LiloError(
                    f"method {name!r}: generate.{key} is a setting of generation, not a "
                    "section: name the method's section with section=..."
                )
            METHOD_SECTIONS.add(key, settings, factory.__module__)
        _METHODS.add(name, _Entry(build, args, key, dict(options or {})), factory.__module__)
        return build

    return decorate


def available_methods() -> list[str]:
    """Registered method names, then each with each of its bracket options."""
    names = _METHODS.names()
    return names + [f"{n}[{o}]" for n in names for o in _METHODS.get(n).options]


def _parse(name: str) -> tuple[str, list[str]]:
    """`compress[llmlingua,sees-written]` -> ("compress", ["llmlingua", "sees-written"])."""
    base, bracket, rest = name.partition("[")
    if not bracket:
        return name, []
    if not rest.endswith("]"):
        raise UnknownName(f"method {name!r}: options go between [ and ], e.g. {base}[option]")
    return base, [o.strip() for o in rest[:-1].split(",") if o.strip()]


def get_method(
    name: str, generate: GenerateSettings, llm: LLMSettings, embedding: EmbeddingSettings
) -> Method:
    """The method `name` (with bracket options, if any) with its parameters taken from the
    sections a method reads (recorded as method_args): the generation settings, its own
    section among them (`generate.<section>`), the backbone's and the embedder's. An
    unknown name or option raises `UnknownName`."""
    base, options = _parse(name)
    entry = _METHODS.get(base)
    own = generate.section(entry.section) if entry.section else None
    given = MethodSettings(own, generate, llm, embedding)
    args = entry.settings_args(given)
    for option in options:
        if option not in entry.options:
            known = ", ".join(f"{base}[{o}]" for o in entry.options) or "none"
            raise UnknownName(f"method {name!r}: no option {option!r}; {base}'s are: {known}")
        args.update(entry.options[option](given))
    if generate.fit_input != "off":  # off leaves a run's id as it was
        args["fit_input"] = generate.fit_input
    return entry.build(**args)
