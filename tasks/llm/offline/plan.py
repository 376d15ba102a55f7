"""Offline handler for AgentWrite's planner (docs/design.md §7, §9): numbered paragraph steps whose
main points come from the papers the prompt shows, one per line in the format asked for."""

from __future__ import annotations

import math

from lilo.tasks.config import OfflineSettings
from lilo.tasks.llm.offline.base import offline_reply
from lilo.tasks.llm.offline.extract import keywords, paper_sentences, target_words
from lilo.tasks.llm.types import Message
from lilo.tasks.paper_tags import parse_paper_blocks

SIGNATURE = "break the writing task above into numbered paragraph steps"

# The step bounds the planner prompt states (docs/design.md §7).
_MIN_STEP, _MAX_STEP = 200, 1000


def matches(prompt: str) -> bool:
    """lilo's planner, or a benchmark's own: the task in `<instruction>`, no steps yet."""
    return SIGNATURE in prompt or ("<instruction>" in prompt and "<steps>" not in prompt)


@offline_reply("plan", matches=matches)
def respond(messages: list[Message], offline: OfflineSettings) -> str:
    prompt = "\n".join(m["content"] for m in messages)
    target = target_words(prompt)
    papers = parse_paper_blocks(prompt)
    points = _main_points(papers, _step_count(prompt, target, len(papers), offline))
    counts = _split(target, len(points))
    return "\n".join(
        f"Paragraph {i} - Main Point: {point} - Word Count: {words}"
        for i, (point, words) in enumerate(zip(points, counts, strict=True), 1)
    )


def _step_count(prompt: str, target: int, papers: int, offline: OfflineSettings) -> int:
    """About `plan_step_words` per step, at least one per section where the length allows,
    within the 200..1000 bounds."""
    low, high = max(1, math.ceil(target / _MAX_STEP)), max(1, target // _MIN_STEP)
    sections = papers + 4
    n = max(round(target / offline.plan_step_words), min(sections, high))
    return min(max(n, low), high)


def _split(target: int, n: int) -> list[int]:
    base, extra = divmod(target, n)
    return [max(_MIN_STEP, base + (i < extra)) for i in range(n)]


def _main_points(papers: list[tuple[int, str]], n: int) -> list[str]:
    sentences = {i: paper_sentences(t) for i, t in papers}
    field = keywords((s for ss in sentences.values() for s in ss), 4)
    paper_steps = max(n - 4, len(papers))
    points = [f"Introduction to the field of {', '.join(field)}: history, progress, challenges"]
    for rank, (i, _) in enumerate(papers):
        parts = paper_steps // len(papers) + (rank < paper_steps % len(papers))
        for part in range(parts):
            segment = _segment(sentences[i], part, parts)
            topic = ", ".join(keywords(segment, 4, exclude=field))
            label = f" (part {part + 1} of {parts})" if parts > 1 else ""
            points.append(f"Content of paper {i}{label}: problem, method and findings on {topic}")
    shared = ", ".join(_shared(sentences) or field[:3])
    points += [
        f"Commonalities of the papers around {shared} and the innovations of each",
        "Comparison of the results of the papers, with their key data in a table",
        f"Conclusion and future directions for research on {', '.join(field[:2])}",
    ]
    return _merge(points, n)


def _shared(sentences: dict[int, tuple[str, ...]]) -> list[str]:
    """Frequent topics that every paper has among its own frequent topics."""
    tops = [set(keywords(ss, 30)) for ss in sentences.values()]
    common = set.intersection(*tops) if tops else set()
    return [w for w in keywords((s for ss in sentences.values() for s in ss), 30) if w in common][
        :3
    ]


def _segment(sentences: tuple[str, ...], part: int, parts: int) -> tuple[str, ...]:
    size = len(sentences)
    return sentences[part * size // parts : (part + 1) * size // parts]


def _merge(points: list[str], n: int) -> list[str]:
    """Fewer steps than sections: neighbouring sections share a step."""
    if len(points) <= n:
        return points
    return ["; ".join(points[g * len(points) // n : (g + 1) * len(points) // n]) for g in range(n)]
