"""AgentWrite (docs/design.md §7): a planner call turns the task into paragraph steps, then one
writer
call per step writes only that paragraph. Compress and RAL-Writer reuse the plan parser and
the step loop from here.

Plans are read as the reference reads them: every non-empty line of the reply is a step,
whatever its format (numbered, bulleted, bold, "400 words" or "Word Count: 400"); a step's
word count is read wherever it appears, and a plan is never a reason to fail.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

from lilo.tasks.methods._prompts import MethodPrompts, task_instruction
from lilo.tasks.methods.base import Draft, MethodSettings, Run, Writer, method
from lilo.tasks.prompt_packs import PromptPack

__all__ = [
    "PLAN_WRITE",
    "Plan",
    "PlanStep",
    "agentwrite",
    "ask_plan",
    "cap_plan",
    "parse_plan",
    "plan_and_write",
    "plan_write_args",
    "write_steps",
]

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

# lilo's templates the planner and the writers render on lilo's datasets.
PLAN_WRITE = ("plan", "write")

Chat = Callable[[str, str, int], str]  # (prompt, step label, attempt) -> reply


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
    """Every non-empty line is a step (the reference's rule: lines split at "\n" alone, so a
    `\r`, `\x0c` or `\u2028` stays inside its step); never raises."""
    steps: list[PlanStep] = []
    for raw in text.split("\n"):
        line = raw.strip()
        if not line:
            continue
        words, rest = _count(line)
        point = re.sub(r"\*\*|__|\(\s*\)", "", _LABEL_RE.sub("", rest, count=1))
        point = re.sub(r"[\s\-–—:;,.(]+$", "", point).strip() or line
        steps.append(PlanStep(len(steps) + 1, line, point, words))
    return steps


@dataclass(frozen=True)
class Plan:
    reply: str  # the planner's reply as it came
    steps: list[PlanStep]


def ask_plan(chat: Chat, prompts: MethodPrompts, instruction: str, attempt: int = 0) -> Plan:
    """The planner's steps; an empty reply yields one step covering the whole task."""
    reply = chat(prompts.plan(instruction), "plan", attempt)
    steps = parse_plan(reply)
    return Plan(
        reply, steps or [PlanStep(1, "Write the whole summary.", "the whole summary", None)]
    )


def cap_plan(plan: Plan, cap: int, pack: PromptPack) -> tuple[Plan, dict[str, Any]]:
    """The plan's first `cap` steps on lilo's datasets (`generate.plan_steps_cap`; 0, and
    on a benchmark: every step, as the reference) and, when it dropped some, what the
    generation's structure records: `{"plan_capped": {"steps": parsed, "kept": cap}}`."""
    if not cap or pack.benchmark or len(plan.steps) <= cap:
        return plan, {}
    record = {"plan_capped": {"steps": len(plan.steps), "kept": cap}}
    return Plan(plan.reply, plan.steps[:cap]), record


# (step, its 0-based index, the text written so far) -> (the writer's prompt, what it restated)
Restate = Callable[[PlanStep, int, str], tuple[str, dict[str, Any]]]


def write_steps(
    chat: Chat,
    prompts: MethodPrompts,
    instruction: str,
    plan: Plan,
    restate: Restate | None = None,
) -> tuple[str, tuple[dict[str, Any], ...]]:
    """One writer call per step; `restate` (RAL-Writer) builds the step's prompt with its
    restatement block and returns what it restated, per step."""
    shown = prompts.plan_text(plan.reply, [s.line for s in plan.steps])
    replies: list[str] = []
    records: list[dict[str, Any]] = []
    for index, step in enumerate(plan.steps):
        written = prompts.written(replies)
        if restate is None:
            prompt = prompts.step(instruction, shown, step.line, index, written)
        else:
            prompt, record = restate(step, index, written)
            records.append(record)
        replies.append(chat(prompt, f"step{step.number}", 0))
    return prompts.compose(replies), tuple(records)


def plan_write_args(s: MethodSettings[None]) -> dict[str, Any]:
    """AgentWrite's arguments: the writer's and the planner's, which Compress shares."""
    args = {
        "temperature": s.llm.temperature,
        "max_tokens": s.generate.step_max_tokens,
        "plan_max_tokens": s.generate.plan_max_tokens,
        "sees_written": False,
        "shared_plan": s.generate.shared_plan,
    }
    if s.generate.plan_steps_cap:  # 0 (every step) leaves a run's id as it was
        args["plan_steps_cap"] = s.generate.plan_steps_cap
    return args


def chat_for(
    run: Run, temperature: float, max_tokens: int, plan_max_tokens: int, shared_plan: bool = False
) -> Chat:
    """The method's calls; each is its own draw (`Run.chat`), the plan shared by every
    method when `shared_plan` (generate.shared_plan) asks for a paired comparison. The
    planner asks `plan_max_tokens` on lilo's datasets, `max_tokens` on a benchmark's."""

    def chat(prompt: str, label: str, attempt: int) -> str:
        plan = label == "plan"
        return run.chat(
            prompt,
            label,
            temperature=temperature,
            max_tokens=plan_max_tokens if plan and not run.pack.benchmark else max_tokens,
            attempt=attempt,
            shared=shared_plan and plan,
        )

    return chat


def plan_and_write(
    run: Run,
    texts: list[str],
    temperature: float,
    budgets: tuple[int, int],
    sees_written: bool,
    shared_plan: bool,
    plan_steps_cap: int,
) -> Draft:
    """AgentWrite over `texts` (the papers, or Compress's compressed papers); `budgets`:
    the writers' and the planner's max_tokens; with `generate.fit_input` on, `texts` are
    what each prompt's papers are cut from."""
    chat = chat_for(replace(run, texts=tuple(texts)), temperature, *budgets, shared_plan)
    prompts = MethodPrompts(run.pack, sees_written)
    instruction = task_instruction(run.pack, texts, run.target_words)
    plan, capped = cap_plan(ask_plan(chat, prompts, instruction), plan_steps_cap, run.pack)
    text, _ = write_steps(chat, prompts, instruction, plan)
    return Draft(text, plan=tuple(s.line for s in plan.steps), structure=capped)


def _variant(args: dict[str, Any]) -> str:
    return "agentwrite[sees-written]" if args["sees_written"] else "agentwrite"


# The writer sees the text written so far: the baseline as the paper describes it, where the
# reference as run showed an empty <written> block (docs/reference.md).
SEES_WRITTEN = {"sees-written": lambda s: {"sees_written": True}}


@method(
    "agentwrite",
    args=plan_write_args,
    variant=_variant,
    options=SEES_WRITTEN,
    templates=PLAN_WRITE,
)
def agentwrite(
    temperature: float,
    max_tokens: int,
    plan_max_tokens: int,
    sees_written: bool,
    shared_plan: bool,
    plan_steps_cap: int = 0,
) -> Writer:
    budgets = (max_tokens, plan_max_tokens)

    def write(run: Run) -> Draft:
        texts = [p.text for p in run.papers]
        return plan_and_write(
            run, texts, temperature, budgets, sees_written, shared_plan, plan_steps_cap
        )

    return write
