"""Offline handler: the quality checklist judge (DESIGN §8, §9). Each item is graded by a
visible feature of the summary that its name points to (headings, tables, equations,
numbers, comparisons, defined abbreviations, transitions, future-work or critique words,
length...), scaled to 0..1 and mapped to the score tiers."""

from __future__ import annotations

import json
import re
from collections.abc import Callable

from tasks.config import Settings
from tasks.llm.client import Message
from tasks.llm.offline._overlap import between, numbers, tier
from tasks.text import count_words, split_sentences, words

__all__ = ["SIGNATURE", "respond"]

SIGNATURE = "Grade the summary on each checklist item"

_CUES = {
    "comparison": r"compar\w*|whereas|in contrast|unlike|outperform\w*|similar\w*|differ\w*",
    "transition": r"however|moreover|furthermore|in addition|therefore|thus|consequently|"
    r"finally|first|second|third|meanwhile|overall",
    "future": r"future|further research|open question\w*|remain\w*|could be extended|promising",
    "critique": r"limitation\w*|weakness\w*|drawback\w*|bias\w*|fails?|assum\w*|however|"
    r"caveat\w*|unclear",
    "trend": r"trend\w*|increas\w*|decreas\w*|improv\w*|grow\w*|declin\w*|scal\w*",
    "theory": r"theor\w*|framework\w*|model\w*|principle\w*|formul\w*|equation\w*",
    "context": r"field|domain\w*|area\w*|discipline\w*|communit\w*|literature",
    "application": r"application\w*|deploy\w*|practical\w*|real-world|industr\w*|use case\w*",
    "novelty": r"novel\w*|new|innovat\w*|introduc\w*|propos\w*|first",
    "testing": r"experiment\w*|evaluat\w*|benchmark\w*|test\w*|ablation\w*|dataset\w*",
    "attribution": r"paper \d|first paper|second paper|third paper|the authors|\\cite|\[\d+\]",
}
# Cue hits per 1,000 words that count as fully met, per cue family.
_FULL_RATE = 6.0
_FULL_HEADINGS, _FULL_TABLE_ROWS, _FULL_EQUATIONS, _FULL_ABBREVIATIONS = 5, 4, 2, 3
# Lexical variety: distinct words per window of 100, full at 0.7 (copy-paste repeats itself).
_WINDOW, _FULL_VARIETY = 100, 0.7
_ABBREVIATION_RE = re.compile(r"[A-Za-z][\w -]{3,}\s\(([A-Z][A-Za-z0-9-]*[A-Z0-9]s?)\)")


def respond(messages: list[Message], settings: Settings) -> str:
    prompt = next(m["content"] for m in messages if SIGNATURE in m["content"])
    summary = between(prompt, "summary")
    required = re.search(r"Required length: (\d+) words", prompt)
    features = _features(summary, int(required.group(1)) if required else 0)
    items = []
    for item in re.findall(r"^- ([^:\n]+):", between(prompt, "checklist"), re.M):
        name, value = _feature_for(item)(features)
        items.append(
            {"item": item, "score": tier(value), "reason": f"{name}: {value:.2f} of the target"}
        )
    return json.dumps({"items": items}, ensure_ascii=False)


def _features(text: str, required: int) -> dict[str, float]:
    n = max(1, count_words(text))
    lines = text.splitlines()
    sentences = [s for line in lines for s in split_sentences(line)]
    vocabulary = [w.lower() for w in words(text)]
    found = {
        family: len(re.findall(rf"\b(?:{cue})\b", text, re.I)) * 1000 / n / _FULL_RATE
        for family, cue in _CUES.items()
    }
    found |= {
        "headings": sum(line.startswith("#") for line in lines) / _FULL_HEADINGS,
        "tables": sum(line.lstrip().startswith("|") for line in lines) / _FULL_TABLE_ROWS,
        "equations": text.count("$") // 2 / _FULL_EQUATIONS,
        "numbers": len(numbers(text)) * 1000 / n / _FULL_RATE,
        "abbreviations": len(set(_ABBREVIATION_RE.findall(text))) / _FULL_ABBREVIATIONS,
        "unique sentences": len(set(sentences)) / max(1, len(sentences)),
        "vocabulary": _variety(vocabulary) / _FULL_VARIETY,
        "length": n / required if required else 1.0,
    }
    return {name: min(1.0, value) for name, value in found.items()}


def _variety(vocabulary: list[str]) -> float:
    windows = [vocabulary[i : i + _WINDOW] for i in range(0, len(vocabulary), _WINDOW)]
    return sum(len(set(w)) / len(w) for w in windows) / len(windows) if windows else 0.0


_BY_ITEM_WORD: list[tuple[str, str]] = [
    ("format", "headings"), ("integrity", "headings"), ("structure", "headings"),
    ("citation", "attribution"), ("terms", "abbreviations"), ("comparison", "tables"),
    ("difference", "comparison"), ("complement", "comparison"), ("contribution", "comparison"),
    ("redundancy", "unique sentences"), ("originality", "vocabulary"),
    ("logic", "transition"), ("transition", "transition"), ("narrative", "transition"),
    ("trend", "trend"), ("theory", "equations"), ("framework", "theory"),
    ("accuracy", "numbers"), ("analytical", "numbers"), ("context", "context"),
    ("cross-domain", "context"), ("generalization", "context"), ("thematic", "context"),
    ("future", "future"), ("improvement", "future"), ("research-question", "future"),
    ("critique", "critique"), ("bias", "critique"), ("alternative", "critique"),
    ("reflection", "critique"), ("testing", "testing"), ("assessment", "critique"),
    ("application", "application"), ("viability", "application"), ("innovation", "novelty"),
    ("transformation", "novelty"),
]  # fmt: skip


def _feature_for(item: str) -> Callable[[dict[str, float]], tuple[str, float]]:
    """The first feature whose cue word the item's name contains; length otherwise."""
    name = next((f for cue, f in _BY_ITEM_WORD if cue in item.lower()), "length")
    return lambda features: (name, features[name])
