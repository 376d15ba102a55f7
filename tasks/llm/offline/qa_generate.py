"""Offline handler: QA generation (docs/design.md §9: "QA from sentences carrying numbers and named
terms"). Each fact is a paper sentence with a number and a named term; the question names
the term and the measured quantity, the answer is the readable sentence, and the evidence
is the sentence exactly as it stands in the paper, so the evidence check can pass."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from itertools import cycle

from lilo.tasks.config import OfflineSettings
from lilo.tasks.llm.offline._overlap import STOPWORDS, key_tokens, named_terms, numbers, strip_latex
from lilo.tasks.llm.offline.base import offline_reply
from lilo.tasks.llm.types import Message
from lilo.tasks.paper_tags import parse_paper_blocks
from lilo.tasks.text import count_words, split_sentences

__all__ = ["SIGNATURE", "matches", "respond"]

SIGNATURE = "question-answer pairs for a long-text summarisation benchmark"


def matches(prompt: str) -> bool:
    return SIGNATURE in prompt


# A fact sentence is long enough to carry context and short enough to be one claim.
_MIN_WORDS, _MAX_WORDS = 8, 60
# Questions sharing this share of key tokens with an earlier one count as the same question.
_SAME_QUESTION = 0.75
_SKIP_BEFORE_NUMBER = STOPWORDS | {
    "achieves", "achieve", "obtains", "obtain", "reaching", "approximately", "roughly",
    "around", "nearly", "almost", "total", "set", "uses", "using", "only", "just", "up",
}  # fmt: skip


@dataclass(frozen=True)
class _Fact:
    paper: int
    quote: str  # verbatim from the paper
    text: str  # readable
    term: str
    measure: str


@offline_reply("qa_generate", matches=matches)
def respond(messages: list[Message], offline: OfflineSettings) -> str:
    prompt = next(m["content"] for m in messages if SIGNATURE in m["content"])
    wanted = int(re.search(r"Number of pairs: (\d+)", prompt).group(1))  # type: ignore[union-attr]
    listed = re.search(r"Existing questions[^\n]*\n(.*?)\nReply with only", prompt, re.S)
    existing = re.findall(r"^- (.+)$", listed.group(1), re.M) if listed else []
    asked = [key_tokens(q) for q in existing]
    facts = {n: _facts(n, text) for n, text in parse_paper_blocks(prompt)}
    if "Kind: cross-context" in prompt:
        items = _cross(facts, wanted, asked)
    else:
        items = _single([f for fs in facts.values() for f in fs], wanted, asked)
    return json.dumps({"pairs": items}, ensure_ascii=False, indent=1)


def _facts(paper: int, text: str) -> list[_Fact]:
    found = []
    for line in text.splitlines():
        if line.lstrip().startswith("\\") or "&" in line:
            continue  # sectioning, environments, table rows
        for sentence in split_sentences(line):
            readable = strip_latex(sentence)
            terms, values = named_terms(readable), numbers(readable)
            if not terms or not values or not _MIN_WORDS <= count_words(readable) <= _MAX_WORDS:
                continue
            found.append(_Fact(paper, sentence, readable, *_anchor(readable, terms, values[0])))
    # Plain sentences first: their quotes survive any copy, and they read well as answers.
    return sorted(found, key=lambda f: "\\" in f.quote or "$" in f.quote)


def _anchor(text: str, terms: list[str], value: str) -> tuple[str, str]:
    """The term nearest before the number, and the quantity the number measures."""
    at = text.find(value)
    before = [t for t in terms if 0 <= text.find(t) < at]
    term = before[-1] if before else terms[0]
    words = re.findall(r"[A-Za-z][A-Za-z-]*", text[:at])[-4:]
    nouns = [w for w in reversed(words) if w.lower() not in _SKIP_BEFORE_NUMBER and w != term]
    after = re.findall(r"[A-Za-z][A-Za-z-]*", text[at + len(value) :])[:1]
    measure = nouns[0] if nouns else (after[0] if after else "figure")
    return term, measure.lower() if measure not in terms else measure


def _new(question: str, asked: list[set[str]]) -> bool:
    tokens = key_tokens(question)
    for seen in asked:
        if tokens and len(tokens & seen) / len(tokens | seen) >= _SAME_QUESTION:
            return False
    asked.append(tokens)
    return True


def _item(question: str, facts: list[_Fact]) -> dict[str, object]:
    return {
        "question": question,
        "answer": " ".join(f.text for f in facts),
        "evidence": [{"paper": f.paper, "quote": f.quote} for f in facts],
    }


def _single(facts: list[_Fact], wanted: int, asked: list[set[str]]) -> list[dict[str, object]]:
    items = []
    for fact in facts:
        others = [t for t in named_terms(fact.text) if t != fact.term]
        where = f" in connection with {others[0]}" if others else ""
        question = f"What {fact.measure} is reported for {fact.term}{where}?"
        if len(items) < wanted and _new(question, asked):
            items.append(_item(question, [fact]))
    return items


def _cross(
    facts: dict[int, list[_Fact]], wanted: int, asked: list[set[str]]
) -> list[dict[str, object]]:
    """Facts from two or three papers per question, cycling through the paper combinations."""
    papers = sorted(n for n, fs in facts.items() if fs)
    combos = [(a, b) for i, a in enumerate(papers) for b in papers[i + 1 :]]
    combos += [tuple(papers)] if len(papers) > 2 else []
    if not combos:
        return []
    nxt = dict.fromkeys(papers, 0)
    items: list[dict[str, object]] = []
    for combo in cycle(combos):
        if len(items) >= wanted or any(nxt[n] >= len(facts[n]) for n in combo):
            break
        chosen = [facts[n][nxt[n]] for n in combo]
        for n in combo:
            nxt[n] += 1
        parts = [f"the {f.measure} reported for {f.term}" for f in chosen]
        question = f"How does {parts[0]} compare with {' and with '.join(parts[1:])}?"
        if _new(question, asked):
            items.append(_item(question, chosen))
    return items
