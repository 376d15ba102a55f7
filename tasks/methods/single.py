"""Single (DESIGN §7): the whole task instruction in one call. Real chat models stop far
short of 8k-16k words in one reply, which is the length gap the study measures."""

from __future__ import annotations

from typing import Any

from tasks.config import Settings
from tasks.methods._prompts import single_prompt, task_instruction
from tasks.methods.base import Draft, Run, Writer, method


def _args(settings: Settings) -> dict[str, Any]:
    return {"temperature": settings.llm.temperature, "max_tokens": settings.llm.max_tokens}


@method("single", args=_args)
def single(temperature: float, max_tokens: int) -> Writer:
    def write(run: Run) -> Draft:
        instruction = task_instruction([p.text for p in run.papers], run.target_words)
        text = run.chat(
            single_prompt(instruction), "write", temperature=temperature, max_tokens=max_tokens
        )
        return Draft(text.strip())

    return write
