"""One probe unit through the LLM client: the prompt built with the gold item at its
position, asked greedily for at most 100 new tokens (as the authors ran their models),
the reply scored."""

from __future__ import annotations

from collections.abc import Sequence

from lilo.tasks.llm import LLMClient, LLMError
from lilo.tasks.probes.metric import kv_correct, qa_correct
from lilo.tasks.probes.placement import place_gold, place_kv
from lilo.tasks.probes.prompts import ProbePrompts
from lilo.tasks.probes.records import ProbeAnswer, ProbeItem, ProbeUnit, content_sha256

__all__ = ["MAX_NEW_TOKENS", "ask", "build_prompt", "units_for"]

MAX_NEW_TOKENS = 100


def build_prompt(unit: ProbeUnit, prompts: ProbePrompts) -> str:
    item = unit.item
    if item.task == "kv":
        records = place_kv(item.context, item.question, unit.position or 0)
        return prompts.kv(records, item.question, unit.query_aware)
    if unit.setting == "closed_book":
        return prompts.closed_book(item.question)
    assert item.gold is not None
    if unit.setting == "oracle":
        return prompts.qa(item.question, [item.gold], unit.query_aware)
    documents = place_gold(list(item.context), item.gold, unit.position or 0)
    return prompts.qa(item.question, documents, unit.query_aware)


def ask(unit: ProbeUnit, prompts: ProbePrompts, llm: LLMClient) -> ProbeAnswer:
    """The unit's answer; an LLM failure is an answer with its error (and no verdict)."""
    item = unit.item
    prompt = build_prompt(unit, prompts)
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
        )
    except LLMError as exc:
        error = str(exc)
    else:
        if item.task == "kv":
            correct = kv_correct(prediction, item.answers[0])
        else:
            correct = qa_correct(prediction, item.answers)
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
