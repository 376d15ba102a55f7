"""What the offline checklist and win-rate judges measure in a summary (docs/design.md §9).

Each checklist item is graded by a visible feature of the text that its question points to
(headings, tables, equations, numbers, comparisons, defined abbreviations, transitions,
future-work or critique words, citation commands...), scaled to 0..1. Items come from a
dataset's checklist, so they are read from the question's words, not from a fixed list.
"""

from __future__ import annotations

import functools
import json
import re

from lilo.tasks.llm.offline._overlap import between, numbers
from lilo.tasks.text import count_words, split_sentences, words

__all__ = ["checklist_items", "feature_for", "features", "responses"]

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
}
# Cue hits per 1,000 words that count as fully met, per cue family.
_FULL_RATE = 6.0
_FULL_HEADINGS, _FULL_TABLE_ROWS, _FULL_EQUATIONS, _FULL_ABBREVIATIONS = 5, 4, 2, 3
# Citation rule violations (citation commands, "[12]"-style references): 4 or more is 0.
_MAX_VIOLATIONS = 4
# Lexical variety: distinct words per window of 100, full at 0.7 (copy-paste repeats itself).
_WINDOW, _FULL_VARIETY = 100, 0.7
_ABBREVIATION_RE = re.compile(r"[A-Za-z][\w -]{3,}\s\(([A-Z][A-Za-z0-9-]*[A-Z0-9]s?)\)")
_VIOLATION_RE = re.compile(r"\\cite\w*\{|\[\d+(?:,\s*\d+)*\]|^#+\s*references\b", re.I | re.M)


def features(text: str) -> dict[str, float]:
    """Each feature of `text`, 0..1 (a fresh dict: the judge grades eight aspects of one
    summary, so the features of a text are measured once)."""
    return dict(_features(text))


@functools.lru_cache(maxsize=64)
def _features(text: str) -> tuple[tuple[str, float], ...]:
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
        "citation hygiene": 1 - len(_VIOLATION_RE.findall(text)) / _MAX_VIOLATIONS,
    }
    return tuple((name, max(0.0, min(1.0, value))) for name, value in found.items())


def _variety(vocabulary: list[str]) -> float:
    windows = [vocabulary[i : i + _WINDOW] for i in range(0, len(vocabulary), _WINDOW)]
    return sum(len(set(w)) / len(w) for w in windows) / len(windows) if windows else 0.0


# Checked in order against the item's question: the first cue word found picks the feature.
_BY_CUE: list[tuple[str, str]] = [
    ("citation", "citation hygiene"), ("markdown", "equations"), ("format", "headings"),
    ("terminolog", "abbreviations"), ("terms", "abbreviations"), ("abbreviation", "abbreviations"),
    ("originality", "vocabulary"), ("verbatim", "vocabulary"), ("redundan", "unique sentences"),
    ("repeat", "unique sentences"), ("integrity", "headings"), ("structur", "headings"),
    ("section", "headings"), ("organi", "headings"), ("transition", "transition"),
    ("narrative", "transition"), ("logic", "transition"), ("flow", "transition"),
    ("comparison dimension", "tables"), ("comparative analysis depth", "tables"),
    ("table", "tables"), ("trend", "trend"), ("pattern", "trend"), ("theor", "theory"),
    ("framework", "theory"), ("equation", "equations"), ("experimental result", "numbers"),
    ("accura", "numbers"), ("data", "numbers"), ("contribution", "comparison"),
    ("complement", "comparison"), ("difference", "comparison"), ("contrast", "comparison"),
    ("compar", "comparison"), ("conflict", "critique"), ("critique", "critique"),
    ("bias", "critique"), ("limitation", "critique"), ("challenge", "critique"),
    ("alternative", "critique"), ("ethic", "critique"), ("improvement", "future"),
    ("future", "future"), ("visionary", "future"), ("trajector", "future"),
    ("research question", "future"), ("research-question", "future"), ("test", "testing"),
    ("application", "application"), ("feasib", "application"), ("viab", "application"),
    ("practical", "application"), ("transfer", "application"), ("market", "application"),
    ("innovat", "novelty"), ("original", "novelty"), ("novel", "novelty"),
    ("transformat", "novelty"), ("method", "comparison"), ("cross-domain", "context"),
    ("interdisciplin", "context"), ("domain", "context"), ("generali", "context"),
    ("context", "context"), ("field", "context"), ("thematic", "context"), ("theme", "context"),
]  # fmt: skip


def feature_for(question: str) -> str:
    """The feature an item's question points to; overall length of coverage otherwise."""
    lowered = question.lower()
    return next((feature for cue, feature in _BY_CUE if cue in lowered), "comparison")


def checklist_items(prompt: str) -> list[tuple[object, str]]:
    """(checklist_id, question) for each item of the `"checklists":` JSON in the prompt."""
    at = prompt.find('"checklists":')
    if at < 0:
        return []
    start = prompt.find("[", at)
    items, _ = json.JSONDecoder().raw_decode(prompt[start:])
    found = []
    for item in items:
        content = item.get("checklist_content", item)
        question = content.get("question", "") if isinstance(content, dict) else str(content)
        found.append((item.get("checklist_id"), question))
    return found


def responses(prompt: str, tags: tuple[str, ...]) -> list[str]:
    """The texts under judgment: inside `tags` where the template has them (lilo's), else
    what sits between the closing fence of the ```rules block and the checklist (the
    benchmark's layout), split at a line ending in "B:" when two are expected."""
    tagged = [between(prompt, tag) for tag in tags]
    if all(tagged):
        return tagged
    rules = prompt.find("```rules")
    start = prompt.find("```", rules + 3) + 3 if rules >= 0 else 0
    body = prompt[start : prompt.rfind('"checklists":')]
    if len(tags) == 1:
        return [body.strip()]
    parts = re.split(r"\n[^\n]*\bB:\s*\n", body, maxsplit=1)
    return [p.strip() for p in parts] if len(parts) == 2 else [body.strip(), body.strip()]
