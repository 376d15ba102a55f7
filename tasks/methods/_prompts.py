"""The prompts the methods send (docs/design.md §7). The task instruction comes from the dataset
version's prompt pack (`tasks/prompt_packs/`). The planner and writer prompts are the dataset's
own method templates where it has them (an imported benchmark's `src/template/*.jinja`,
`PromptPack.extras`), rendered with the variables bound exactly as the reference's agents
bind them (docs/reference.md, "Method templates"); on lilo's own datasets they are lilo's
templates in `tasks/methods/templates/`, in lilo's words with the reference's fields and
order.

The offline engine's plan and step handlers look for `PLAN_ASK` and `STEP_ASK` (or the
tags the benchmark's templates share with lilo's): keep those phrases when rewording.
"""

from __future__ import annotations

import functools
import hashlib
from collections.abc import Sequence
from dataclasses import dataclass
from importlib import resources

import jinja2

from lilo.tasks.prompt_packs import PromptPack, prompt_template, reference_template

__all__ = [
    "PLAN_ASK",
    "RESTATE_SEPARATOR",
    "STEP_ASK",
    "MethodPrompts",
    "task_instruction",
    "templates_fingerprint",
]

PLAN_ASK = "break the writing task above into numbered paragraph steps"
STEP_ASK = "Now write only the next paragraph, for this step of the plan:"
# The reference joins restated chunks with a `---` line between blank lines.
RESTATE_SEPARATOR = "\n\n---\n\n"


def _source(name: str) -> str:
    return (resources.files(__package__) / "templates" / f"{name}.jinja").read_text()


@functools.cache
def _template(name: str) -> jinja2.Template:
    return prompt_template(_source(name))


@functools.cache
def templates_fingerprint(names: tuple[str, ...]) -> str:
    """Changes whenever one of lilo's method templates `names` does: part of the ids of
    the generations rendered with them on lilo's datasets."""
    blob = "\0".join(_source(n) for n in names)
    return hashlib.sha256(blob.encode()).hexdigest()[:16]


def task_instruction(pack: PromptPack, texts: list[str], target_words: int) -> str:
    """The dataset's task: the papers in numbered tags, its key requirements, the length."""
    return pack.render("task", papers=texts, length=target_words)


@dataclass(frozen=True)
class MethodPrompts:
    """Planner and writer prompts on one dataset version. `sees_written` binds the text
    written so far where the reference's AgentWrite passed it under a name its template
    does not read (`text=`): the corrected baseline, a named variant."""

    pack: PromptPack
    sees_written: bool = False

    def _extra(self, *names: str) -> list[str] | None:
        found = [self.pack.extras.get(n) for n in names]
        return [f for f in found if f is not None] if all(found) else None

    @property
    def reference(self) -> bool:
        """Whether the dataset's own planner is used (and with it the reference's way of
        passing the plan and the text written so far: as the replies came)."""
        return "plan" in self.pack.extras

    def plan(self, instruction: str) -> str:
        """The planner; a re-ask (RAL-Writer) sends the same prompt again."""
        if (own := self._extra("plan")) is not None:
            return reference_template(own[0]).render(instruction=instruction)
        return _template("plan").render(instruction=instruction)

    def plan_text(self, reply: str, lines: Sequence[str]) -> str:
        """The plan as the writers see it: the planner's reply as it came (the reference),
        or its step lines (lilo)."""
        return reply if self.reference else "\n".join(lines)

    def written(self, replies: Sequence[str]) -> str:
        """The text written so far: each reply after a newline (the reference's `written +=
        "\\n" + reply`), or lilo's paragraphs stripped, between blank lines."""
        if self.reference:
            return "".join(f"\n{r}" for r in replies)
        return "\n\n".join(r.strip() for r in replies)

    def compose(self, replies: Sequence[str]) -> str:
        """The summary: the replies between blank lines (the reference joins them as they
        came; lilo strips each and skips empty ones)."""
        if self.reference:
            return "\n\n".join(replies)
        return "\n\n".join(p for r in replies if (p := r.strip()))

    def step(self, instruction: str, plan: str, step: str, index: int, written: str) -> str:
        """AgentWrite's (and Compress's) writer for the step at `index` (0-based)."""
        own = self._extra("write_begin", "write_step")
        if own is None:
            return self._lilo_step(instruction, plan, step, written)
        if index == 0:
            return reference_template(own[0]).render(instruction=instruction, plan=plan, step=step)
        # The reference's ConcatAgent passes `text=written`; its template reads `written`.
        key = "written" if self.sees_written else "text"
        return reference_template(own[1]).render(
            instruction=instruction, plan=plan, step=step, **{key: written}
        )

    def restated_step(
        self,
        instruction: str,
        plan: str,
        step: str,
        written: str,
        restatement: str,
        keys: str,
        begin: bool,
    ) -> str:
        """RAL-Writer's writer with its restatement block. `begin`: the reference renders
        its first-step template on the first step and whenever it lowered k to fit the
        context, and then passes neither the text written nor the key requirements."""
        own = self._extra("write_begin_with_restate", "write_step_with_restate")
        if own is None:
            shown = keys if written else ""
            return self._lilo_step(instruction, plan, step, written, restatement, shown)
        if begin:
            return reference_template(own[0]).render(
                instruction=instruction, plan=plan, step=step, restatement=restatement
            )
        return reference_template(own[1]).render(
            instruction=instruction,
            plan=plan,
            step=step,
            written=written,
            restatement=restatement,
            keys=keys,
        )

    @staticmethod
    def _lilo_step(
        instruction: str, plan: str, step: str, written: str, restatement: str = "", keys: str = ""
    ) -> str:
        """lilo's writer, in the reference's order: instruction, steps, the text so far
        (from the second step on), the restatement block, the current step, the key
        requirements (RAL-Writer, from the second step on), the closing rules. It opens with
        the instruction, as lilo's planner does, and everything up to the text so far is the
        same at every step, so a server that caches prompt prefixes (llama.cpp, vLLM,
        OpenAI) reads the papers once per summary."""
        return _template("write").render(
            instruction=instruction,
            plan=plan,
            written=written,
            restatement=restatement,
            step=step,
            keys=keys,
        )
