"""RAL-Writer (docs/design.md §7): AgentWrite plus retrieve-and-restate. Before each writer call the
chunks of the whole instruction are scored by relevance to the step minus a position bias
that is largest at both ends (the model already attends there), and the top-k are restated
near the end of the prompt, most important last, just before the current step and the
task's key requirements, where a long-context model attends best."""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
from pydantic import Field

from lilo.tasks.config import Section, output_values
from lilo.tasks.methods._prompts import RESTATE_SEPARATOR, MethodPrompts, task_instruction
from lilo.tasks.methods._splitter import split_recursive
from lilo.tasks.methods.agentwrite import (
    PLAN_WRITE,
    Chat,
    Plan,
    PlanStep,
    ask_plan,
    cap_plan,
    chat_for,
    write_steps,
)
from lilo.tasks.methods.base import Draft, MethodSettings, Run, Writer, method
from lilo.tasks.prompt_packs import key_requirements
from lilo.tasks.tokens import count_gpt4o_tokens

__all__ = ["RALSettings", "importance", "position_bias", "ral_writer", "select_restatements"]


class RALSettings(Section):
    """RAL-Writer defaults are the paper's best (docs/design.md §7)."""

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
    # P(i) = b * |2(i/N - 0.5)|^a (`magnitude`), or the reference's |b * (2(i/N - 0.5))^a|
    # (`reference`): NaN before the middle for a non-integer a, and sorted as the reference
    # sorts NaN; the two agree for every integer a and b >= 0 (docs/reference.md).
    position_formula: Literal["magnitude", "reference"] = "magnitude"


def position_bias(i: int, n: int, a: float, b: float, formula: str = "magnitude") -> float:
    """P(i) = b * |2(i/N - 0.5)|^a: b at the start, about b at the end, 0 in the middle.
    `reference`: the reference's |b * (2(i/N - 0.5))^a|, NaN before the middle where a is
    not an integer (a negative number to a fractional power); the same value otherwise."""
    if formula == "reference":
        with np.errstate(invalid="ignore"):
            return float(np.fabs(b * np.power(2 * (i / n - 0.5), a)))
    return b * abs(2 * (i / n - 0.5)) ** a


def importance(
    relevance: Sequence[float], a: float, b: float, formula: str = "magnitude"
) -> list[float]:
    """I(i) = R(i) - P(i) over the N chunks, R(i) = cosine(E_i, E_step)."""
    n = len(relevance)
    return [float(r) - position_bias(i, n, a, b, formula) for i, r in enumerate(relevance)]


def select_restatements(scores: Sequence[float], k: int) -> list[int]:
    """The top-k chunk indices by importance, in ascending importance (most important last);
    ties go to the earlier chunk. Sorted as the reference sorts (`sorted(..., reverse=True)`
    on the scores), so a NaN score falls where the reference's sort leaves it."""
    top = sorted(range(len(scores)), key=lambda i: scores[i], reverse=True)[: max(k, 0)]
    return top[::-1]


def _args(s: MethodSettings[RALSettings]) -> dict[str, Any]:
    ral = output_values(s.own)
    if float(ral["a"]).is_integer():  # the formulas agree: a run's id does not depend on it
        del ral["position_formula"]
    args = {
        **ral,
        "embedding": s.embedder,
        "temperature": s.llm.temperature,
        "max_tokens": s.generate.step_max_tokens,
        "plan_max_tokens": s.generate.plan_max_tokens,
        "shared_plan": s.generate.shared_plan,
    }
    if s.generate.plan_steps_cap:  # 0 (every step) leaves a run's id as it was
        args["plan_steps_cap"] = s.generate.plan_steps_cap
    return args


def _variant(args: dict[str, Any]) -> str:
    """`ral_writer` at the paper's best a, b and k; those that differ shown otherwise, e.g.
    `ral_writer[k=8]`, `ral_writer[a=20,b=0.1]` (k=0: no restatement)."""
    best = RALSettings()
    shown = [f"{p}={args[p]:g}" for p in ("a", "b", "k") if args[p] != getattr(best, p)]
    return f"ral_writer[{','.join(shown)}]" if shown else "ral_writer"


def _short_plan(
    chat: Chat, prompts: MethodPrompts, instruction: str, max_steps: int, retries: int
) -> Plan:
    """The same plan prompt is asked again while the plan has `max_steps` steps or more
    (docs/design.md §7); lilo stops after `retries` re-asks and keeps the last plan."""
    plan = ask_plan(chat, prompts, instruction)
    for attempt in range(1, retries + 1):
        if len(plan.steps) < max_steps:
            break
        plan = ask_plan(chat, prompts, instruction, attempt)
    return plan


@method(
    "ral_writer",
    args=_args,
    settings=RALSettings,
    section="ral",
    variant=_variant,
    templates=PLAN_WRITE,
)
def ral_writer(
    a: float,
    b: float,
    k: int,
    chunk_words: int,
    overlap_words: int,
    max_plan_steps: int,
    plan_retries: int,
    context_limit_tokens: int,
    embedding: str,
    temperature: float,
    max_tokens: int,
    plan_max_tokens: int,
    shared_plan: bool,
    position_formula: str = "magnitude",
    plan_steps_cap: int = 0,
) -> Writer:
    p = _Params(a, b, k, chunk_words, overlap_words, max_plan_steps, plan_retries,
                context_limit_tokens, temperature, max_tokens, plan_max_tokens, shared_plan,
                position_formula, plan_steps_cap)  # fmt: skip
    return functools.partial(_write, p)


@dataclass(frozen=True)
class _Params:
    """The factory's arguments, which the steps read."""

    a: float
    b: float
    k: int
    chunk_words: int
    overlap_words: int
    max_plan_steps: int
    plan_retries: int
    context_limit_tokens: int
    temperature: float
    max_tokens: int
    plan_max_tokens: int
    shared_plan: bool
    position_formula: str
    plan_steps_cap: int


def _write(p: _Params, run: Run) -> Draft:
    """The plan, then each step written with the chunks it restates."""
    chat = chat_for(run, p.temperature, p.max_tokens, p.plan_max_tokens, p.shared_plan)
    prompts = MethodPrompts(run.pack)
    instruction = task_instruction(run.pack, [paper.text for paper in run.papers], run.target_words)
    plan = _short_plan(chat, prompts, instruction, p.max_plan_steps, p.plan_retries)
    plan, capped = cap_plan(plan, p.plan_steps_cap, run.pack)
    # The reference chunks the whole instruction (task text and papers), so a chunk's
    # position is its place in the prompt the model reads.
    chunks = split_recursive(instruction, p.chunk_words, p.overlap_words)
    restate = _Restater(
        p,
        run,
        prompts,
        instruction,
        prompts.plan_text(plan.reply, [s.line for s in plan.steps]),
        key_requirements(instruction),
        chunks,
        run.embedder.embed(chunks),
        run.embedder.embed([s.line for s in plan.steps]),
        [count_gpt4o_tokens(c) for c in chunks],
        count_gpt4o_tokens(instruction),
    )
    text, restated = write_steps(chat, prompts, instruction, plan, restate)
    return Draft(text, plan=tuple(s.line for s in plan.steps), restated=restated, structure=capped)


@dataclass(frozen=True)
class _Restater:
    """One summary's restatement: for a plan step, the chunks it restates (by their
    importance, as many as fit) and the writer's prompt holding them."""

    p: _Params
    run: Run
    prompts: MethodPrompts
    instruction: str
    shown: str  # the plan as the writer sees it
    keys: str
    chunks: list[str]
    chunk_vectors: np.ndarray
    step_vectors: np.ndarray
    chunk_tokens: list[int]
    instruction_tokens: int

    def __call__(self, step: PlanStep, index: int, written: str) -> tuple[str, dict[str, Any]]:
        p = self.p
        relevance = self.chunk_vectors @ self.step_vectors[step.number - 1]
        scores = importance(np.asarray(relevance).tolist(), p.a, p.b, p.position_formula)

        def prompt_for(chosen: list[int], begin: bool) -> str:
            block = RESTATE_SEPARATOR.join(self.chunks[i] for i in chosen)
            return self.prompts.restated_step(
                self.instruction, self.shown, step.line, written, block, self.keys, begin
            )

        if self.prompts.reference:
            used, chosen, prompt = _fit_as_run(
                scores, p.k, p.context_limit_tokens, index, prompt_for, self.fits
            )
        else:
            # The instruction is counted once; per step only what surrounds it.
            base = prompt_for([], False)
            rest = count_gpt4o_tokens(base.replace(self.instruction, "", 1))
            room = p.context_limit_tokens - self.instruction_tokens - rest
            used, chosen = _fit(scores, self.chunk_tokens, p.k, room)
            prompt = prompt_for(chosen, False)
            while used and not self.fits(prompt):
                used -= 1
                chosen = select_restatements(scores, used)
                prompt = prompt_for(chosen, False)
        record = {
            "step": step.number,
            "embedder": self.run.embedder.label,
            "chunks": chosen,
            # NaN (the reference's formula) is stored as null: JSON has no NaN
            "importance": [None if scores[i] != scores[i] else round(scores[i], 6) for i in chosen],
            "k": used,
        }
        return prompt, record

    def fits(self, prompt: str) -> bool:
        """Whether `prompt` fits the endpoint's window, where it is known."""
        return self.run.fits(prompt, self.p.max_tokens)


def _fit_as_run(
    scores: list[float],
    k: int,
    limit: int,
    index: int,
    prompt_for: Callable[[list[int], bool], str],
    fits: Callable[[str], bool],
) -> tuple[int, list[int], str]:
    """The reference's loop (src/agent/restate.py): from k down to 1, the top-k chunks (all
    of them when there are no more than k), rendered with the first-step template on the
    first step and whenever k was lowered, until the whole prompt is under `limit` GPT-4o
    tokens and `fits` the endpoint's window with its budget; at k = 1 the prompt goes as
    it is."""
    n = len(scores)
    used, chosen, prompt = 0, [], prompt_for([], index == 0)
    for tried in range(k, 0, -1):
        used = tried if n > k else n
        chosen = select_restatements(scores, used)
        prompt = prompt_for(chosen, index == 0 or tried < k)
        if count_gpt4o_tokens(prompt) < limit and fits(prompt):
            break
    return used, chosen, prompt


def _fit(scores: list[float], chunk_tokens: list[int], k: int, room: int) -> tuple[int, list[int]]:
    """Lower k one at a time while the prompt would reach the context limit (docs/design.md §7).
    GPT-4o tokens are counted once per chunk and added up, not re-counted per k."""
    separator = count_gpt4o_tokens(RESTATE_SEPARATOR)
    for used in range(min(k, len(scores)), 0, -1):
        chosen = select_restatements(scores, used)
        if sum(chunk_tokens[i] + separator for i in chosen) < room:
            return used, chosen
    return 0, []
