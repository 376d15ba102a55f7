"""RAL-Writer (DESIGN §7): AgentWrite plus retrieve-and-restate. Before each writer call the
chunks of the whole instruction are scored by relevance to the step minus a position bias
that is largest at both ends (the model already attends there), and the top-k are restated
near the end of the prompt, most important last, just before the current step and the
task's key requirements, where a long-context model attends best."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from tasks.config import Settings, output_values
from tasks.methods._prompts import RESTATE_SEPARATOR, task_instruction
from tasks.methods._splitter import split_recursive
from tasks.methods.agentwrite import Chat, PlanStep, ask_plan, chat_for, write_steps
from tasks.methods.base import Draft, Run, Writer, method
from tasks.prompts import key_requirements
from tasks.tokens import count_gpt4o_tokens

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
    return {
        **output_values(settings.generate.ral),
        # What embeds chunks and steps: a different retriever is a different method run.
        "embedding": f"{settings.embedding.backend}:{settings.embedding.model}",
        "temperature": settings.llm.temperature,
        "max_tokens": settings.generate.step_max_tokens,
    }


def _variant(args: dict[str, Any]) -> str:
    """`ral_writer` with the paper's best k; the k shown otherwise (k=0: no restatement)."""
    return "ral_writer" if args["k"] == 12 else f"ral_writer[k={args['k']}]"


def _short_plan(chat: Chat, instruction: str, max_steps: int, retries: int) -> list[PlanStep]:
    """The same plan prompt is asked again while the plan has `max_steps` steps or more
    (DESIGN §7); lilo stops after `retries` re-asks and keeps the last plan."""
    steps = ask_plan(chat, instruction)
    for attempt in range(1, retries + 1):
        if len(steps) < max_steps:
            break
        steps = ask_plan(chat, instruction, attempt)
    return steps


@method("ral_writer", args=_args, variant=_variant)
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
) -> Writer:
    def write(run: Run) -> Draft:
        chat = chat_for(run, temperature, max_tokens)
        instruction = task_instruction(run.pack, [p.text for p in run.papers], run.target_words)
        keys = key_requirements(instruction)
        steps = _short_plan(chat, instruction, max_plan_steps, plan_retries)
        # The reference chunks the whole instruction (task text and papers), so a chunk's
        # position is its place in the prompt the model reads.
        chunks = split_recursive(instruction, chunk_words, overlap_words)
        chunk_vectors = run.embedder.embed(chunks)
        step_vectors = run.embedder.embed([s.line for s in steps])
        chunk_tokens = [count_gpt4o_tokens(c) for c in chunks]
        instruction_tokens = count_gpt4o_tokens(instruction)

        def restate(step: PlanStep, written: str, base: str) -> tuple[str, str, dict[str, Any]]:
            relevance = chunk_vectors @ step_vectors[step.number - 1]
            scores = importance(np.asarray(relevance).tolist(), a, b)
            step_keys = keys if written else ""
            # The instruction is counted once; per step only what surrounds it.
            rest = count_gpt4o_tokens(base.replace(instruction, "", 1) + step_keys)
            room = context_limit_tokens - instruction_tokens - rest
            used, chosen = _fit(scores, chunk_tokens, k, room)
            record = {
                "step": step.number,
                "embedder": run.embedder.label,
                "chunks": chosen,
                "importance": [round(scores[i], 6) for i in chosen],
                "k": used,
            }
            block = RESTATE_SEPARATOR.join(chunks[i] for i in chosen)
            return block, step_keys, record

        text, restated = write_steps(chat, instruction, steps, restate)
        return Draft(text, plan=tuple(s.line for s in steps), restated=restated)

    return write


def _fit(scores: list[float], chunk_tokens: list[int], k: int, room: int) -> tuple[int, list[int]]:
    """Lower k one at a time while the prompt would reach the context limit (DESIGN §7).
    GPT-4o tokens are counted once per chunk and added up, not re-counted per k."""
    separator = count_gpt4o_tokens(RESTATE_SEPARATOR)
    for used in range(min(k, len(scores)), 0, -1):
        chosen = select_restatements(scores, used)
        if sum(chunk_tokens[i] + separator for i in chosen) < room:
            return used, chosen
    return 0, []
