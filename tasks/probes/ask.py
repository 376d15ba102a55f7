"""One probe unit through the LLM client: the prompt built with the gold item at its
position, asked greedily for at most 100 new tokens (as the authors ran their models),
the reply graded, each as its task says (tasks/probes/kinds/), and checked for an echo of
the prompt (tasks/probes/metric.py)."""

from __future__ import annotations

from collections.abc import Sequence

from lilo.tasks.llm import LLMClient, LLMError
from lilo.tasks.probe_records import ProbeAnswer, ProbeItem, ProbeUnit, content_sha256
from lilo.tasks.probes.kinds import get_probe_task
from lilo.tasks.probes.metric import echoes_prompt
from lilo.tasks.probes.prompts import ProbePrompts

__all__ = ["MAX_NEW_TOKENS", "ask", "build_prompt", "units_for"]

MAX_NEW_TOKENS = 100


def build_prompt(unit: ProbeUnit, prompts: ProbePrompts) -> str:
    return get_probe_task(unit.item.task).prompt(unit, prompts)


def ask(unit: ProbeUnit, prompts: ProbePrompts, llm: LLMClient) -> ProbeAnswer:
    """The unit's answer; an LLM failure is an answer with its error (no verdict, no echo).
    The completion form of the prompts is sent as a completion, stopped where its task says."""
    item = unit.item
    task = get_probe_task(item.task)
    prompt = build_prompt(unit, prompts)
    completion = {"prompt": prompt, "stop": task.stop} if prompts.completions else {}
    answer_id = content_sha256(
        item.item_id,
        unit.setting,
        unit.position,
        unit.query_aware,
        prompts.source,
        llm.backbone,
        prompt,
    )[:32]
    prediction, error, correct = "", "", None
    try:
        prediction = llm.chat(
            [{"role": "user", "content": prompt}],
            purpose=f"probe_{item.task}",
            temperature=0.0,
            max_tokens=MAX_NEW_TOKENS,
            **completion,
        )
    except LLMError as exc:
        error = str(exc)
    else:
        correct = task.grade(prediction, item)
    return ProbeAnswer(
        answer_id=answer_id,
        item_id=item.item_id,
        task=item.task,
        probe_set=item.probe_set,
        variant=unit.variant,
        size=item.size,
        setting=unit.setting,
        position=unit.position,
        query_aware=unit.query_aware,
        prompts=prompts.source,
        backbone=llm.backbone,
        prediction=prediction,
        correct=correct,
        error=error,
        echo=None if error else echoes_prompt(prediction, prompt),
    )


def units_for(
    items: Sequence[ProbeItem],
    variant: str,
    positions: Sequence[int],
    query_aware: bool,
    baselines: Sequence[str] = (),
) -> list[ProbeUnit]:
    """Every item at every position (those within its size), then each baseline asked once
    per question of the variant (`closed_book`, `oracle`)."""
    units = [
        ProbeUnit(item, variant, "position", p, query_aware)
        for item in items
        for p in positions
        if p < item.size
    ]
    seen: set[str] = set()
    for item in items:
        if item.question in seen:
            continue
        seen.add(item.question)
        units += [ProbeUnit(item, variant, setting, None, query_aware) for setting in baselines]
    return units
