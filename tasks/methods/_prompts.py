"""The prompts the methods send (DESIGN §7). The task instruction comes from the dataset
version's prompt pack (`tasks/prompts/`); the planner and writer prompts are the methods'
own templates in `tasks/methods/templates/`, in lilo's words with the reference's fields
and order.

The offline engine's plan and step handlers look for `PLAN_ASK` and `STEP_ASK`: keep those
phrases when rewording the templates.
"""

from __future__ import annotations

import functools
from importlib import resources

import jinja2

from tasks.prompts import PromptPack

__all__ = [
    "PLAN_ASK",
    "RESTATE_SEPARATOR",
    "STEP_ASK",
    "planner_prompt",
    "task_instruction",
    "writer_prompt",
]

PLAN_ASK = "break the writing task below into numbered paragraph steps"
STEP_ASK = "Now write only the next paragraph, for this step of the plan:"
# The reference joins restated chunks with a `---` line between blank lines.
RESTATE_SEPARATOR = "\n\n---\n\n"


@functools.cache
def _template(name: str) -> jinja2.Template:
    source = (resources.files("tasks.methods") / "templates" / f"{name}.jinja").read_text()
    return jinja2.Environment(
        autoescape=False, undefined=jinja2.StrictUndefined, keep_trailing_newline=False
    ).from_string(source)


def task_instruction(pack: PromptPack, texts: list[str], target_words: int) -> str:
    """The dataset's task: the papers in numbered tags, its key requirements, the length."""
    return pack.render("task", papers=texts, length=target_words)


def planner_prompt(instruction: str) -> str:
    """AgentWrite's planner; a re-ask (RAL-Writer) sends the same prompt again."""
    return _template("plan").render(instruction=instruction)


def writer_prompt(
    instruction: str,
    plan: str,
    written: str,
    step: str,
    restatement: str = "",
    keys: str = "",
) -> str:
    """A writer call, in the reference's order: instruction, steps, the text so far (from
    the second step on), the restatement block, the current step, the key requirements
    (RAL-Writer, from the second step on), the closing rules."""
    return _template("write").render(
        instruction=instruction,
        plan=plan,
        written=written,
        restatement=restatement,
        step=step,
        keys=keys,
    )
