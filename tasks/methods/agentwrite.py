"""AgentWrite (DESIGN §7): a planner call turns the task into numbered paragraph steps, then
one writer call per step writes only that paragraph. Compress and RAL-Writer reuse the plan
parser and the step loop from here."""

from __future__ import annotations

import functools
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from tasks.config import Settings
from tasks.methods._prompts import planner_prompt, task_instruction, writer_prompt
from tasks.methods.base import Draft, MethodError, Run, Writer, method

__all__ = [
    "PlanError",
    "PlanStep",
    "agentwrite",
    "ask_plan",
    "parse_plan",
    "plan_and_write",
    "write_steps",
]

# The bounds the planner prompt asks for (DESIGN §7).
MIN_STEP_WORDS = 200
MAX_STEP_WORDS = 1000

_STEP_RE = re.compile(r"Paragraph (\d+) - Main Point: (.+?) - Word Count: (\d+)")

Chat = Callable[[str, str], str]  # (prompt, step label) -> reply
Restate = Callable[["PlanStep", str], tuple[str, dict[str, Any]]]


class PlanError(MethodError):
    """The planner's reply is not a usable plan."""


@dataclass(frozen=True)
class PlanStep:
    number: int
    main_point: str
    words: int
    line: str


def parse_plan(text: str) -> list[PlanStep]:
    """Strict: every non-blank line is a step, numbered 1..n, each 200..1000 words."""
    steps: list[PlanStep] = []
    for raw in text.splitlines():
        line = raw.strip()
        if not line:
            continue
        match = _STEP_RE.fullmatch(line)
        if match is None:
            raise PlanError(
                f"plan line {line!r} is not a step: expected "
                "'Paragraph N - Main Point: ... - Word Count: N', one per line, nothing else"
            )
        number, words = int(match.group(1)), int(match.group(3))
        if number != len(steps) + 1:
            raise PlanError(f"plan step {number} out of order: expected {len(steps) + 1}")
        if not MIN_STEP_WORDS <= words <= MAX_STEP_WORDS:
            raise PlanError(
                f"plan step {number} asks for {words} words: each step must ask for "
                f"{MIN_STEP_WORDS}..{MAX_STEP_WORDS}"
            )
        steps.append(PlanStep(number, match.group(2).strip(), words, line))
    if not steps:
        raise PlanError("the planner returned no steps: check the planner prompt and backbone")
    return steps


def ask_plan(
    chat: Chat, instruction: str, target_words: int, previous_steps: int = 0, limit: int = 0
) -> list[PlanStep]:
    prompt = planner_prompt(instruction, target_words, previous_steps, limit)
    label = f"plan{'-retry' if previous_steps else ''}"
    return parse_plan(chat(prompt, label))


def write_steps(
    chat: Chat, instruction: str, steps: list[PlanStep], restate: Restate | None = None
) -> tuple[str, tuple[dict[str, Any], ...]]:
    """One writer call per step; `restate` may extend each prompt (RAL-Writer) and returns
    what it added, recorded per step."""
    plan = [s.line for s in steps]
    paragraphs: list[str] = []
    records: list[dict[str, Any]] = []
    for step in steps:
        prompt = writer_prompt(instruction, plan, "\n\n".join(paragraphs), step.line)
        if restate is not None:
            prompt, record = restate(step, prompt)
            records.append(record)
        paragraphs.append(chat(prompt, f"step{step.number}").strip())
    return "\n\n".join(p for p in paragraphs if p), tuple(records)


def _args(settings: Settings) -> dict[str, Any]:
    return {"temperature": settings.llm.temperature, "max_tokens": settings.llm.max_tokens}


def plan_and_write(run: Run, texts: list[str], temperature: float, max_tokens: int) -> Draft:
    """AgentWrite over `texts` (the papers, or Compress's compressed papers)."""
    chat = functools.partial(run.chat, temperature=temperature, max_tokens=max_tokens)
    instruction = task_instruction(texts, run.target_words)
    steps = ask_plan(chat, instruction, run.target_words)
    text, _ = write_steps(chat, instruction, steps)
    return Draft(text, plan=tuple(s.line for s in steps))


@method("agentwrite", args=_args)
def agentwrite(temperature: float, max_tokens: int) -> Writer:
    def write(run: Run) -> Draft:
        return plan_and_write(run, [p.text for p in run.papers], temperature, max_tokens)

    return write
