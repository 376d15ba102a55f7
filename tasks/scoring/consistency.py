"""Consistency score S_c (docs/design.md §8): a judge answers each approved question from the
generated text alone, an evaluator grades that answer against the gold answer on the
five tiers; S_c = (mean single + mean cross)/2 x100. Per-position single-context means
(`single_pos1`...) feed the position analysis.

On a published benchmark's pack the judges follow its protocol: the answer prompt ends
with the benchmark's appended sentence (`qa_answer_suffix`), and the grade is asked for
through structured output holding only the score (`SCORE_SCHEMA`). lilo's own pack asks
for its reason and score through structured output (`GRADE_SCHEMA`). An endpoint that
rejects `response_format` is asked the same prompt for free JSON instead, and each
judgment records which (`grade_format`). An answer cut at its budget is graded as it
stands and marked `answer_truncated`.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from functools import partial
from statistics import mean
from typing import Any

from lilo.tasks.llm import Message, ResponseFormatUnsupported
from lilo.tasks.prompt_packs import PromptPack
from lilo.tasks.qa.parse import (
    TIERS,
    QAFormatError,
    ask_json,
    json_schema,
    load_json_reply,
    object_schema,
    tier_value,
)
from lilo.tasks.records import QAPair, ScoreRow
from lilo.tasks.scoring.base import ScoreContext, Scored, scorer

__all__ = ["GRADE_SCHEMA", "SCORE_SCHEMA", "consistency", "consistency_score"]

# The benchmark's QA grade: an object holding only the score, as OpenAI's structured output
# (`response_format`) takes it; the shape `beta.chat.completions.parse` sends for a
# pydantic model `JUDGE` with one `score: float` field, as the reference's script asks.
SCORE_SCHEMA: dict[str, Any] = {
    "type": "json_schema",
    "json_schema": {
        "schema": {
            "properties": {"score": {"title": "Score", "type": "number"}},
            "required": ["score"],
            "title": "JUDGE",
            "type": "object",
            "additionalProperties": False,
        },
        "name": "JUDGE",
        "strict": True,
    },
}


# lilo's own grade (its pack's `qa_judge` asks for both): a reason, and a score on the tiers.
GRADE_SCHEMA = json_schema(
    "grade",
    object_schema(reason={"type": "string"}, score={"type": "number", "enum": list(TIERS)}),
)


def consistency_score(single: list[float], cross: list[float]) -> float:
    """(mean single + mean cross)/2 x100; with one kind missing, that kind's mean x100."""
    means = [mean(scores) for scores in (single, cross) if scores]
    if not means:
        raise ValueError("consistency needs at least one judged question")
    return 100.0 * mean(means)


def _answer_messages(pack: PromptPack, text: str, question: str) -> list[Message]:
    """The answerer sees the generated text and the question, nothing else (docs/design.md §8);
    the benchmark's appended sentence follows the rendered prompt directly, as there."""
    content = pack.render("qa_answer", paper=text, question=question)
    return [{"role": "user", "content": content + pack.extras.get("qa_answer_suffix", "")}]


def _evaluate_messages(pack: PromptPack, question: str, gold: str, answer: str) -> list[Message]:
    content = pack.render("qa_judge", question=question, answer=gold, predict=answer)
    return [{"role": "user", "content": content}]


def _read_order(paper_ids: tuple[str, ...], rotation: int) -> list[str]:
    r = rotation % max(len(paper_ids), 1)
    return list(paper_ids[r:] + paper_ids[:r])


def _grade(reply: str) -> tuple[float, str]:
    value = load_json_reply(reply, dict)
    if not isinstance(value.get("reason"), str):
        raise QAFormatError('expected {"reason": "...", "score": ...}')
    return tier_value(value.get("score")), value["reason"]


def _score_only(reply: str) -> tuple[float, str]:
    """A structured grade: `{"score": ...}`, no reason."""
    return tier_value(load_json_reply(reply, dict).get("score")), ""


@scorer(
    "consistency",
    label="S_c",
    order=2,
    about="consistency: the QA pairs answered from the summary, graded",
)
def consistency(ctx: ScoreContext) -> Scored:
    """S_c, its single and cross halves, and S_single by position (the position of the
    question's paper in the order the generation read the papers). An unusable grade leaves
    its question out of the means and goes into the row's `failed` list; a score whose every
    question failed has no row and is `unscored`."""
    generation, sample = ctx.generation, ctx.sample
    pairs = [p for p in ctx.qa if p.status == "approved" and p.sample_id == sample.sample_id]
    if not pairs:
        return Scored([])
    # the order the generation recorded; generations written before it was: the sample's
    order = list(generation.papers_read) or _read_order(sample.paper_ids, generation.rotation)
    with ThreadPoolExecutor(ctx.settings.judge.concurrency) as pool:
        judged = list(pool.map(partial(_judge, ctx, order), pairs))
    single = [j for j in judged if j["kind"] == "single"]
    groups = {
        "consistency": judged,
        "consistency_single": single,
        "consistency_cross": [j for j in judged if j["kind"] == "cross"],
        **{
            f"single_pos{position}": [j for j in single if j["position"] == position]
            for position in sorted({j["position"] for j in single})
        },
    }
    base = {"judge_temperature": ctx.settings.judge.temperature, "prompts": ctx.pack.name}
    rows: list[ScoreRow] = []
    unscored: dict[str, str] = {}
    for name, group in groups.items():
        graded = [j for j in group if j["score"] is not None]
        failed = [j for j in group if j["score"] is None]
        if not graded and failed:
            unscored[name] = f"all {len(failed)} grades unusable: {failed[0]['reason']}"
        elif graded:
            value = consistency_score(
                [j["score"] for j in graded if j["kind"] == "single"],
                [j["score"] for j in graded if j["kind"] == "cross"],
            )
            detail = {**base, "questions": graded, "failed": failed}
            rows.append(ScoreRow(generation.generation_id, name, value, detail, ctx.judge.backbone))
    return Scored(rows, unscored)


def _judge(ctx: ScoreContext, order: list[str], pair: QAPair) -> dict[str, Any]:
    """The judge's answer and its grade; `score` None when the grade is unusable after the
    retry, with why and the raw reply."""
    judge, pack, cfg = ctx.judge, ctx.pack, ctx.settings.judge
    answer = judge.complete(
        _answer_messages(pack, ctx.generation.text, pair.question),
        purpose="consistency_answer",
        temperature=cfg.temperature,
        max_tokens=cfg.answer_max_tokens,
    )
    messages = _evaluate_messages(pack, pair.question, pair.answer, answer.text)
    ask = partial(
        ask_json,
        judge,
        messages,
        purpose="consistency_evaluate",
        temperature=cfg.temperature,
        max_tokens=cfg.grade_max_tokens,
    )
    grade_format = "structured"
    structured = (_score_only, SCORE_SCHEMA) if pack.benchmark else (_grade, GRADE_SCHEMA)
    try:
        graded, reply, error = ask(structured[0], response_format=structured[1], fallback=False)
    except ResponseFormatUnsupported:
        grade_format = "free_json (structured output rejected)"
        graded, reply, error = ask(_grade)
    position = order.index(pair.paper_ids[0]) + 1 if pair.kind == "single" else 0
    judgment = {
        "qa_id": pair.qa_id,
        "kind": pair.kind,
        "position": position,
        "question": pair.question,
        "answer": answer.text,
        "grade_format": grade_format,
        **({"answer_truncated": True} if answer.truncated else {}),
    }
    if graded is None:
        return {**judgment, "score": None, "reason": f"unusable grade: {error}", "raw": reply}
    return {**judgment, "score": graded[0], "reason": graded[1]}
