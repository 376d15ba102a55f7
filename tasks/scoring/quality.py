"""Quality score S_q (DESIGN §8): an LLM judge grades 8 aspects x 5 checklist items, one call
per aspect, each item on the five tiers against its own rubric; S_q = mean over aspects of
the mean over items, x100."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from functools import partial
from statistics import mean
from typing import Any

from tasks.config import Settings
from tasks.llm import LLMClient, Message
from tasks.qa.parse import QAFormatError, ask_json, load_json_reply
from tasks.records import Generation, PaperText, QAPair, Sample, ScoreRow
from tasks.scoring._judge import tier_value
from tasks.scoring.base import Scored, scorer

__all__ = ["CHECKLIST", "Quality", "quality_score"]

CHECKLIST: dict[str, dict[str, str]] = {
    "instruction following": {
        "originality": "written in its own words rather than copied from the papers",
        "citation standards": "attributes each claim clearly to the paper it comes from",
        "domain terms": "uses the field's terms correctly, abbreviations spelled out at first use",
        "format": "has a title and Markdown structure, with tables and equations where asked",
        "comparison dimensions": "compares the papers along explicit, relevant dimensions",
    },
    "structure": {
        "integrity": "covers introduction, each paper, commonalities, comparison and conclusion",
        "logic": "sections and paragraphs follow a clear logical order",
        "transitions": "moves between sections and paragraphs with explicit transitions",
        "narrative consistency": "keeps one consistent line of argument and terminology",
        "no redundancy": "does not repeat the same content",
    },
    "data utilization": {
        "trends": "identifies trends in the reported results",
        "theory integration": "connects the results to the underlying theory and equations",
        "analytical acumen": "interprets the numbers instead of only listing them",
        "field context": "places the results in the context of the field",
        "accuracy of results": "reports data and results precisely and correctly",
    },
    "correlation analysis": {
        "methodological differences": "explains how the papers' methods differ",
        "complementarity": "shows how the papers complement each other",
        "contribution evaluation": "weighs each paper's contribution relative to the others",
        "thematic connection": "makes the common theme of the papers explicit",
        "integrative framework": "proposes a framework that integrates the papers",
    },
    "insightfulness": {
        "cross-domain impact": "discusses impact beyond the papers' own domain",
        "application viability": "assesses whether the methods are viable in practice",
        "future directions": "proposes concrete future research directions",
        "innovation identification": "identifies what is genuinely new in each paper",
        "structure proposal": "proposes a structure or taxonomy for the research area",
    },
    "critical thinking": {
        "methodological critique": "critiques the papers' methods with reasons",
        "bias detection": "points out possible biases in data, evaluation or framing",
        "improvement suggestions": "suggests specific improvements",
        "depth of critique": "goes beyond surface remarks in its critique",
        "alternative hypotheses": "considers alternative explanations of the results",
    },
    "reflection": {
        "contribution assessment": "reflects on how much each paper advances the field",
        "method reflection": "reflects on the strengths and limits of the methods",
        "generalization": "discusses whether the findings generalise",
        "cross-domain connection": "connects the findings to other domains",
        "testing discussion": "discusses how the claims were or should be tested",
    },
    "innovation": {
        "innovation analysis": "analyses the nature of each paper's innovation",
        "methodological transformation": "explains how the methods change established practice",
        "application creativity": "suggests creative new applications",
        "research-question impact": "discusses the impact on the field's research questions",
        "cross-domain innovation": "identifies innovations transferable to other domains",
    },
}


def quality_score(aspect_items: dict[str, list[float]]) -> float:
    """Mean over aspects of the mean over their items, x100: each aspect weighs the same
    whatever its number of items (aspects with no items are left out)."""
    means = [mean(items) for items in aspect_items.values() if items]
    if not means:
        raise ValueError("quality needs at least one graded checklist item")
    return 100.0 * mean(means)


def _column(aspect: str) -> str:
    return "quality_" + aspect.replace(" ", "_").replace("-", "_")


def _messages(aspect: str, text: str, sample: Sample, target_words: int) -> list[Message]:
    items = "\n".join(f"- {item}: {rubric}" for item, rubric in CHECKLIST[aspect].items())
    user = (
        f'Grade the summary on each checklist item of the aspect "{aspect}".\n'
        f"The task was a summary of about {target_words} words of {len(sample.paper_ids)} "
        f'related research papers on "{sample.topic}", written for researchers.\n'
        "Score each item 0, 0.25, 0.5, 0.75 or 1 against its rubric (1: fully met, "
        "0.75: largely, 0.5: partly, 0.25: barely, 0: not at all).\n"
        'Reply with only a JSON object: {"items": [{"item": "<item name>", "score": 0.5, '
        '"reason": "..."}]}, one entry per item.\n'
        f"Required length: {target_words} words\n\n"
        f"<checklist>\n{items}\n</checklist>\n\n<summary>\n{text}\n</summary>"
    )
    return [{"role": "user", "content": user}]


def _graded(aspect: str, reply: str) -> list[dict[str, Any]]:
    """One {"item", "score", "reason"} per checklist item of the aspect, in checklist order."""
    entries = load_json_reply(reply, dict).get("items")
    if not isinstance(entries, list):
        raise QAFormatError('expected {"items": [...]}')
    by_name = {}
    for entry in entries:
        if not isinstance(entry, dict) or not isinstance(entry.get("item"), str):
            raise QAFormatError('each entry is {"item": "...", "score": ..., "reason": "..."}')
        if not isinstance(entry.get("reason"), str):
            raise QAFormatError(f"item {entry['item']!r} needs a string 'reason'")
        by_name[entry["item"].strip().lower()] = (tier_value(entry.get("score")), entry["reason"])
    missing = [item for item in CHECKLIST[aspect] if item not in by_name]
    if missing:
        raise QAFormatError(f"items missing: {missing}; grade every checklist item by its name")
    return [
        {"item": item, "score": by_name[item][0], "reason": by_name[item][1]}
        for item in CHECKLIST[aspect]
    ]


@scorer("quality")
class Quality:
    def __init__(self, settings: Settings) -> None:
        self.settings = settings

    def score(
        self,
        generation: Generation,
        sample: Sample,
        papers: list[PaperText],
        qa: list[QAPair],
        llm: LLMClient,
    ) -> Scored:
        """S_q and one row per aspect. An aspect whose judge reply is unusable after the
        retry has no row (it is `unscored`), is left out of S_q and listed in its `failed`."""
        judge = partial(self._judge, generation, sample, llm)
        with ThreadPoolExecutor(self.settings.llm.concurrency) as pool:
            judged = dict(zip(CHECKLIST, pool.map(judge, CHECKLIST), strict=True))
        graded = {aspect: items for aspect, items in judged.items() if isinstance(items, list)}
        failed = [failure for failure in judged.values() if isinstance(failure, dict)]
        unscored = {_column(f["aspect"]): f["reason"] for f in failed}
        if not graded:
            unscored["quality"] = f"all {len(failed)} aspects unusable: {failed[0]['reason']}"
            return Scored([], unscored)
        base = {"judge_temperature": self.settings.llm.judge_temperature}
        scores = {aspect: [i["score"] for i in items] for aspect, items in graded.items()}
        aspects = {a: 100.0 * mean(s) for a, s in scores.items()}
        rows = [
            ScoreRow(
                generation.generation_id,
                "quality",
                quality_score(scores),
                {**base, "aspects": aspects, "failed": failed},
            )
        ]
        for aspect, items in graded.items():
            value = quality_score({aspect: scores[aspect]})
            detail = {**base, "items": items}
            rows.append(ScoreRow(generation.generation_id, _column(aspect), value, detail))
        return Scored(rows, unscored)

    def _judge(
        self, generation: Generation, sample: Sample, llm: LLMClient, aspect: str
    ) -> list[dict[str, Any]] | dict[str, str]:
        """The aspect's graded items, or {aspect, reason, raw} when the reply is unusable
        after the retry."""
        items, reply, error = ask_json(
            llm,
            _messages(aspect, generation.text, sample, generation.target_words),
            partial(_graded, aspect),
            purpose="quality_checklist",
            temperature=self.settings.llm.judge_temperature,
        )
        if items is not None:
            return items
        return {"aspect": aspect, "reason": f"unusable judge reply: {error}", "raw": reply}
