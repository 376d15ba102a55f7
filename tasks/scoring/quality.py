"""Quality score S_q (docs/design.md §8): an LLM judge grades the dataset version's checklist (8
aspects x 5 items), one call per aspect as in the reference, each item against its own five
level descriptions; S_q = mean over aspects of the mean over items, x100.

The judge is shown `[{"checklist_id": i, "checklist_content": item}]`, each item exactly as
its checklist file holds it, serialized as the reference's quality script does
(`json.dumps` with its defaults: ASCII escapes, `", "` and `": "` separators), after the
dataset's checklist system message (the benchmark's own where its pack has one, else
lilo's), and replies `[{"checklist_id", "reason", "evaluation_score"}]`, at the checklist
temperature (`judge.checklist_temperature`; the published script uses 0.8, see
docs/reference.md). On the imported benchmark the prompt is byte-identical to the
reference's rendering.
"""

from __future__ import annotations

import json
from concurrent.futures import ThreadPoolExecutor
from functools import partial
from statistics import mean
from typing import Any

from lilo.tasks.llm import Message
from lilo.tasks.prompt_packs import ChecklistItem, PromptPack
from lilo.tasks.qa.parse import QAFormatError, ask_json, load_json_reply, tier_value
from lilo.tasks.records import ScoreRow
from lilo.tasks.scoring.base import ScoreContext, Scored, scorer

__all__ = ["checklist_messages", "quality", "quality_score"]


# lilo's own checklist system message; a benchmark's pack carries its own (`checklist_system`).
_JUDGE_ROLE = (
    "You are a careful evaluator. You check texts written by language models against "
    "checklists of questions about what the user's instruction asked for."
)


def quality_score(aspect_items: dict[str, list[float]]) -> float:
    """Mean over aspects of the mean over their items, x100: each aspect weighs the same
    whatever its number of items (aspects with no items are left out)."""
    means = [mean(items) for items in aspect_items.values() if items]
    if not means:
        raise ValueError("quality needs at least one graded checklist item")
    return 100.0 * mean(means)


def _column(aspect: str) -> str:
    return "quality_" + aspect.lower().replace(" ", "_").replace("-", "_")


def checklist_messages(
    pack: PromptPack, template: str, items: list[ChecklistItem], **texts: str
) -> list[Message]:
    """The judge prompt for one aspect's items (`texts`: the response variables), after the
    pack's system message setting the judge's role, as the reference's checklist judge has."""
    checklists = json.dumps([i.as_prompt() for i in items])
    content = pack.render(template, checklists=checklists, num_checklist=len(items), **texts)
    system = pack.extras.get("checklist_system", _JUDGE_ROLE)
    return [{"role": "system", "content": system}, {"role": "user", "content": content}]


def _graded(items: list[ChecklistItem], reply: str) -> list[dict[str, Any]]:
    """One {"item", "question", "score", "reason"} per checklist item, in checklist order."""
    entries = load_json_reply(reply, list)
    by_id: dict[int, tuple[float, str]] = {}
    for entry in entries:
        if not isinstance(entry, dict) or "checklist_id" not in entry:
            raise QAFormatError('each entry is {"checklist_id", "reason", "evaluation_score"}')
        try:
            item_id = int(entry["checklist_id"])
        except (TypeError, ValueError) as exc:
            raise QAFormatError(f"checklist_id {entry['checklist_id']!r} is not a number") from exc
        reason = entry.get("reason")
        if not isinstance(reason, str):
            raise QAFormatError(f"checklist item {item_id} needs a string 'reason'")
        by_id[item_id] = (tier_value(entry.get("evaluation_score")), reason)
    missing = [i.index for i in items if i.index not in by_id]
    if missing:
        raise QAFormatError(f"checklist ids missing: {missing}; grade every item")
    return [
        {"item": i.index, "question": i.question, "score": by_id[i.index][0],
         "reason": by_id[i.index][1]}
        for i in items
    ]  # fmt: skip


@scorer("quality", label="S_q", order=3, about="quality: the judge's checklist over five aspects")
def quality(ctx: ScoreContext) -> Scored:
    """S_q and one row per aspect. An aspect whose judge reply is unusable after the retry
    has no row (it is `unscored`), is left out of S_q and listed in its `failed`."""
    generation, judge, pack = ctx.generation, ctx.judge, ctx.pack
    aspects = list(pack.checklist)
    with ThreadPoolExecutor(ctx.settings.judge.concurrency) as pool:
        judged = dict(zip(aspects, pool.map(partial(_judge, ctx), aspects), strict=True))
    graded = {aspect: items for aspect, items in judged.items() if isinstance(items, list)}
    failed = [failure for failure in judged.values() if isinstance(failure, dict)]
    unscored = {_column(f["aspect"]): f["reason"] for f in failed}
    if not graded:
        unscored["quality"] = f"all {len(failed)} aspects unusable: {failed[0]['reason']}"
        return Scored([], unscored)
    base = {
        "judge_temperature": ctx.settings.judge.checklist_temperature,
        "checklist": pack.name,
    }
    scores = {aspect: [i["score"] for i in items] for aspect, items in graded.items()}
    by_aspect = {a: 100.0 * mean(s) for a, s in scores.items()}
    rows = [
        ScoreRow(
            generation.generation_id,
            "quality",
            quality_score(scores),
            {**base, "aspects": by_aspect, "failed": failed},
            judge.backbone,
        )
    ]
    for aspect, items in graded.items():
        value = quality_score({aspect: scores[aspect]})
        detail = {**base, "items": items}
        rows.append(
            ScoreRow(generation.generation_id, _column(aspect), value, detail, judge.backbone)
        )
    return Scored(rows, unscored)


def _judge(ctx: ScoreContext, aspect: str) -> list[dict[str, Any]] | dict[str, str]:
    """The aspect's graded items, or {aspect, reason, raw} when the reply is unusable after
    the retry."""
    items = ctx.pack.checklist[aspect]
    graded, reply, error = ask_json(
        ctx.judge,
        checklist_messages(ctx.pack, "checklist", items, response=ctx.generation.text),
        partial(_graded, items),
        purpose="quality_checklist",
        temperature=ctx.settings.judge.checklist_temperature,
        max_tokens=ctx.settings.judge.checklist_max_tokens,
    )
    if graded is not None:
        return graded
    return {"aspect": aspect, "reason": f"unusable judge reply: {error}", "raw": reply}
