"""Token overlap and tag helpers shared by the offline engine's QA and judge handlers.

The engine reads only the prompt: tags such as <summary> or <gold_answer> delimit what it
compares, and "key tokens" (numbers, named terms, content words) are what it compares.
"""

from __future__ import annotations

import re

__all__ = [
    "between",
    "key_tokens",
    "named_terms",
    "numbers",
    "overlap",
    "strip_latex",
    "tier",
]

STOPWORDS = frozenset(
    """a about above after again against all also am an and any are as at be because been
    before being below between both but by can could did do does doing down during each few
    for from further had has have having he her here hers him his how i if in into is it its
    itself just me more most my no nor not now of off on once only or other our ours out over
    own same she should so some such than that the their theirs them then there these they
    this those through to too under until up very was we were what when where which while who
    whom why will with would you your yours paper papers reported report reports according
    compare compared does reach reaches value""".split()
)
# Ratio of gold key tokens found -> score tier (docs/design.md §8 tiers, docs/design.md §9 mapping).
TIERS = ((0.9, 1.0), (0.7, 0.75), (0.5, 0.5), (0.2, 0.25))

_NUMBER_RE = re.compile(r"(?<![\w.-])\d+(?:\.\d+)?(?![\w-])")
_WORD_RE = re.compile(r"[A-Za-z][A-Za-z0-9]*(?:-[A-Za-z0-9]+)*")
_TERM_RE = re.compile(r"\b(?:[A-Z][a-z0-9]+[A-Z][A-Za-z0-9-]*|[A-Z]{2,}[A-Za-z0-9-]*)\b")
_CAPITAL_RE = re.compile(r"(?<!^)(?<![.!?]\s)\b[A-Z][a-z]{2,}\b")
_DROP_CMD_RE = re.compile(
    r"\\(?:cite[a-z]*|ref|eqref|label|footnote|url)\*?(?:\[[^\]]*\])?\{[^{}]*\}"
)
_KEEP_CMD_RE = re.compile(r"\\[a-zA-Z]+\*?(?:\[[^\]]*\])?\{([^{}]*)\}")
_BARE_CMD_RE = re.compile(r"\\[a-zA-Z]+\*?")


def between(prompt: str, tag: str) -> str:
    """The text inside the last <tag>...</tag> of the prompt ("" if absent)."""
    found = re.findall(rf"<{tag}>(.*?)</{tag}>", prompt, re.S)
    return found[-1].strip() if found else ""


def strip_latex(text: str) -> str:
    """Readable text from a LaTeX sentence: citations dropped, markup unwrapped."""
    text = _DROP_CMD_RE.sub("", text)
    for _ in range(3):
        text = _KEEP_CMD_RE.sub(r"\1", text)
    text = text.replace("\\%", "%").replace("~", " ").replace("$", "")
    text = _BARE_CMD_RE.sub("", text).replace("{", "").replace("}", "")
    text = re.sub(r"\s+([,.;:)])", r"\1", text)
    return re.sub(r"\s+", " ", text).strip()


def numbers(text: str) -> list[str]:
    return _NUMBER_RE.findall(text)


def named_terms(text: str) -> list[str]:
    """CamelCase words and acronyms first, then capitalised words not opening a sentence."""
    strong = _TERM_RE.findall(text)
    weak = [w for w in _CAPITAL_RE.findall(text) if w.lower() not in STOPWORDS]
    return list(dict.fromkeys(strong + weak))


def key_tokens(text: str) -> set[str]:
    """Numbers, named terms and content words, lowercased."""
    content = {w.lower() for w in _WORD_RE.findall(text) if len(w) > 2}
    return (content - STOPWORDS) | set(numbers(text))


def overlap(reference: str, candidate: str) -> tuple[float, set[str]]:
    """Share of the reference's key tokens found in the candidate, and the missing ones."""
    wanted = key_tokens(reference)
    if not wanted:
        return 0.0, set()
    missing = wanted - key_tokens(candidate)
    return 1 - len(missing) / len(wanted), missing


def tier(ratio: float) -> float:
    return next((score for floor, score in TIERS if ratio >= floor), 0.0)
