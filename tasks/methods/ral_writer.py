"""RAL-Writer (DESIGN §7): AgentWrite plus retrieve-and-restate. Before each writer call the
input's chunks are scored by relevance to the step minus a position bias that is largest at
both ends of the input (the model already attends there), and the top-k are restated at the
tail of the prompt, most important last, where a long-context model attends best."""

from __future__ import annotations

import functools
from collections.abc import Sequence
from typing import Any

import numpy as np

from tasks.config import Settings
from tasks.methods._prompts import restatement_block, task_instruction
from tasks.methods._splitter import split_recursive
from tasks.methods.agentwrite import Chat, PlanStep, ask_plan, write_steps
from tasks.methods.base import Draft, Run, Writer, method
from tasks.text import count_tokens

__all__ = ["importance", "position_bias", "ral_writer", "select_restatements"]


def position_bias(i: int, n: int, a: float, b: float) -> float:
    """P(i) = b * |2i/N - 1|^a: b at the start, about b at the end, 0 in the middle."""
    return b * abs(2 * i / n - 1) ** a


def importance(relevance: Sequence[float], a: float, b: float) -> list[float]:
    """I(i) = R(i) - P(i) over the N chunks, R(i) = cosine(E_i, E_step)."""
    n = len(relevance)
    return [float(r) - position_bias(i, n, a, b) for i, r in enumerate(relevance)]


def select_restatements(scores: Sequence[float], k: int) -> list[int]:
    """The top-k chunk indices by importance, in ascending importance (most important last);
    ties go to the earlier chunk."""
    top = sorted(range(len(scores)), key=lambda i: (-scores[i], i))[: max(k, 0)]
    return top[::-1]


def _args(settings: Settings) -> dict[str, Any]:
    ral = settings.generate.ral
    return {
        "a": ral.a,
        "b": ral.b,
        "k": ral.k,
        "chunk_words": ral.chunk_words,
        "overlap_words": ral.overlap_words,
        "max_plan_steps": ral.max_plan_steps,
        "plan_retries": ral.plan_retries,
        "context_tokens": settings.llm.context_tokens,
        "embedding_model": settings.embedding.model,
        "temperature": settings.llm.temperature,
        "max_tokens": settings.llm.max_tokens,
    }


def _short_plan(
    chat: Chat, instruction: str, target_words: int, max_steps: int, retries: int
) -> list[PlanStep]:
    """The plan is asked for again while it has `max_steps` steps or more (bounded); after
    the last retry the plan is used as it is."""
    steps = ask_plan(chat, instruction, target_words)
    for _ in range(retries):
        if len(steps) < max_steps:
            break
        steps = ask_plan(chat, instruction, target_words, len(steps), max_steps)
    return steps


@method("ral_writer", args=_args)
def ral_writer(
    a: float,
    b: float,
    k: int,
    chunk_words: int,
    overlap_words: int,
    max_plan_steps: int,
    plan_retries: int,
    context_tokens: int,
    embedding_model: str,
    temperature: float,
    max_tokens: int,
) -> Writer:
    def write(run: Run) -> Draft:
        chat = functools.partial(run.chat, temperature=temperature, max_tokens=max_tokens)
        texts = [p.text for p in run.papers]
        instruction = task_instruction(texts, run.target_words)
        steps = _short_plan(chat, instruction, run.target_words, max_plan_steps, plan_retries)
        chunks = split_recursive("\n\n".join(texts), chunk_words, overlap_words)
        chunk_vectors = run.embedder.embed(chunks)
        step_vectors = run.embedder.embed([s.main_point for s in steps])
        # The prompt plus the reply must fit the backbone's context window.
        budget = context_tokens - max_tokens

        def restate(step: PlanStep, prompt: str) -> tuple[str, dict[str, Any]]:
            relevance = chunk_vectors @ step_vectors[step.number - 1]
            scores = importance(np.asarray(relevance).tolist(), a, b)
            used, chosen, block = _fit(chunks, scores, k, budget - count_tokens(prompt))
            record = {
                "step": step.number,
                "chunks": chosen,
                "importance": [round(scores[i], 6) for i in chosen],
                "k": used,
            }
            return prompt + block, record

        text, restated = write_steps(chat, instruction, steps, restate)
        return Draft(text, plan=tuple(s.line for s in steps), restated=restated)

    return write


def _fit(chunks: list[str], scores: list[float], k: int, room: int) -> tuple[int, list[int], str]:
    """Lower k one at a time until the restatement block fits the room left (DESIGN §7)."""
    for used in range(min(k, len(chunks)), 0, -1):
        chosen = select_restatements(scores, used)
        block = restatement_block([(i, chunks[i]) for i in chosen])
        if count_tokens(block) <= room:
            return used, chosen, block
    return 0, [], ""
