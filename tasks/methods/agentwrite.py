"""AgentWrite (DESIGN §7): a planner call turns the task into paragraph steps, then one writer
call per step writes only that paragraph. Compress and RAL-Writer reuse the plan parser and
the step loop from here.

Plans are read as the reference reads them: every non-empty line of the reply is a step,
whatever its format (numbered, bulleted, bold, "400 words" or "Word Count: 400"); a step's
word count is read wherever it appears, and a plan is never a reason to fail.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from tasks.config import Settings
from tasks.methods._prompts import planner_prompt, task_instruction, writer_prompt
from tasks.methods.base import Draft, Run, Writer, method

__all__ = ["PlanStep", "agentwrite", "ask_plan", "parse_plan", "plan_and_write", "write_steps"]

# "Word Count: 400 words", "Word count: about 1,000", then "400 words", "~400 words".
_COUNT_RE = re.compile(
    r"word\s*count\s*[:：=\-–]?\s*(?:about|approximately|around|~)?\s*(\d[\d,]*)(?:\s*words?)?",
    re.I,
)
_N_WORDS_RE = re.compile(r"(?:about\s*|~\s*)?(\d[\d,]*)\s*words?\b(?!\s*count)", re.I)
_LABEL_RE = re.compile(
    r"^\s*(?:[-*•#>]+\s*)?(?:\*\*|__)?\s*(?:paragraph|step|section|part)?\s*\d*\s*"
    r"(?:\*\*|__)?\s*[.:)\-–—]*\s*(?:\*\*|__)?\s*(?:main\s*point\s*[:：]\s*)?",
    re.I,
)

Chat = Callable[[str, str, int], str]  # (prompt, step label, attempt) -> reply
Restate = Callable[["PlanStep", str, str], tuple[str, str, dict[str, Any]]]


@dataclass(frozen=True)
class PlanStep:
    number: int
    line: str  # as the planner wrote it: what the writer and the retriever see
    main_point: str  # the line without its numbering, markup and word count
    words: int | None  # None when the line states no count


def _count(line: str) -> tuple[int | None, str]:
    """The step's word count and the line without it."""
    for pattern in (_COUNT_RE, _N_WORDS_RE):
        match = pattern.search(line)
        if match:
            rest = line[: match.start()] + line[match.end() :]
            return int(match.group(1).replace(",", "")), rest
    return None, line


def parse_plan(text: str) -> list[PlanStep]:
    """Every non-empty line is a step (the reference's rule); never raises."""
    steps = []
    for raw in text.splitlines():
        line = raw.strip()
        if not line:
            continue
        words, rest = _count(line)
        point = re.sub(r"\*\*|__|\(\s*\)", "", _LABEL_RE.sub("", rest, count=1))
        point = re.sub(r"[\s\-–—:;,.(]+$", "", point).strip() or line
        steps.append(PlanStep(len(steps) + 1, line, point, words))
    return steps


def ask_plan(chat: Chat, instruction: str, attempt: int = 0) -> list[PlanStep]:
    """The planner's steps; an empty reply yields one step covering the whole task."""
    steps = parse_plan(chat(planner_prompt(instruction), "plan", attempt))
    return steps or [PlanStep(1, "Write the whole summary.", "the whole summary", None)]


def write_steps(
    chat: Chat, instruction: str, steps: list[PlanStep], restate: Restate | None = None
) -> tuple[str, tuple[dict[str, Any], ...]]:
    """One writer call per step; `restate` (RAL-Writer) turns the step's prompt parts into
    a restatement block and the key requirements, and returns what it added, per step."""
    plan = "\n".join(s.line for s in steps)
    paragraphs: list[str] = []
    records: list[dict[str, Any]] = []
    for step in steps:
        written = "\n\n".join(paragraphs)
        if restate is None:
            prompt = writer_prompt(instruction, plan, written, step.line)
        else:
            prompt, record = _restated(restate, instruction, plan, written, step)
            records.append(record)
        paragraphs.append(chat(prompt, f"step{step.number}", 0).strip())
    return "\n\n".join(p for p in paragraphs if p), tuple(records)


def _restated(
    restate: Restate, instruction: str, plan: str, written: str, step: PlanStep
) -> tuple[str, dict[str, Any]]:
    base = writer_prompt(instruction, plan, written, step.line)
    block, keys, record = restate(step, written, base)
    return writer_prompt(instruction, plan, written, step.line, block, keys), record


def _args(settings: Settings) -> dict[str, Any]:
    return {
        "temperature": settings.llm.temperature,
        "max_tokens": settings.generate.step_max_tokens,
    }


def chat_for(run: Run, temperature: float, max_tokens: int) -> Chat:
    def chat(prompt: str, label: str, attempt: int) -> str:
        return run.chat(
            prompt, label, temperature=temperature, max_tokens=max_tokens, attempt=attempt
        )

    return chat


def plan_and_write(run: Run, texts: list[str], temperature: float, max_tokens: int) -> Draft:
    """AgentWrite over `texts` (the papers, or Compress's compressed papers)."""
    chat = chat_for(run, temperature, max_tokens)
    instruction = task_instruction(run.pack, texts, run.target_words)
    steps = ask_plan(chat, instruction)
    text, _ = write_steps(chat, instruction, steps)
    return Draft(text, plan=tuple(s.line for s in steps))


@method("agentwrite", args=_args)
def agentwrite(temperature: float, max_tokens: int) -> Writer:
    return functools.partial(_write, temperature=temperature, max_tokens=max_tokens)


def _write(run: Run, temperature: float, max_tokens: int) -> Draft:
    return plan_and_write(run, [p.text for p in run.papers], temperature, max_tokens)
