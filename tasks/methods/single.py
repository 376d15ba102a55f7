"""Single (docs/design.md §7): the task instruction alone, in one call, with the reference's output
limit of 32,768 tokens. Real chat models stop far short of 8k-16k words in one reply, which
is the length gap the study measures."""

from __future__ import annotations

import functools
from typing import Any

from lilo.tasks.methods._prompts import task_instruction
from lilo.tasks.methods.base import Draft, MethodSettings, Run, Writer, method


def _args(s: MethodSettings[None]) -> dict[str, Any]:
    return {"temperature": s.llm.temperature, "max_tokens": s.generate.single_max_tokens}


@method("single", args=_args)
def single(temperature: float, max_tokens: int) -> Writer:
    return functools.partial(_write, temperature=temperature, max_tokens=max_tokens)


def _write(run: Run, temperature: float, max_tokens: int) -> Draft:
    instruction = task_instruction(run.pack, [p.text for p in run.papers], run.target_words)
    text = run.chat(instruction, "write", temperature=temperature, max_tokens=max_tokens)
    return Draft(text.strip())
