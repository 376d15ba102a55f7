"""Offline handler: QA generation (docs/design.md §9: "QA from sentences carrying numbers and named
terms"). Each fact is a paper sentence with a number and a named term. The question quotes
the readable sentence with its first number blanked out and asks for that number (a cross
question, one sentence of each paper it uses), so it is well-formed whatever the sentence
says; the answer is the readable sentence, and the evidence is the sentence exactly as it
stands in the paper, so the evidence check can pass and the answer is in it."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from itertools import cycle

from lilo.tasks.config import OfflineSettings
from lilo.tasks.llm.offline._overlap import key_tokens, named_terms, numbers, strip_latex
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
_BLANK = "___"
_HOW_MANY = {2: "two", 3: "three"}


@dataclass(frozen=True)
class _Fact:
    paper: int
    quote: str  # verbatim from the paper
    text: str  # readable
    blanked: str  # readable, its first number blanked out, no closing stop


@offline_reply("qa_generate", matches=matches)
def respond(messages: list[Message], offline: OfflineSettings) -> str:
    prompt = next(m["content"] for m in messages if SIGNATURE in m["content"])
    wanted = int(re.search(r"Number of pairs: (\d+)", prompt).group(1))  # type: ignore[union-attr]  # lilo's prompt says it
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
            terms, values = named_terms(readable), _figures(readable)
            if not terms or not values or not _MIN_WORDS <= count_words(readable) <= _MAX_WORDS:
                continue
            if not _whole(readable):
                continue  # a line's piece of a sentence, or markup left over
            found.append(_Fact(paper, sentence, readable, _blanked(readable, values[0])))
    # Plain sentences first: their quotes survive any copy, and they read well as answers.
    return sorted(found, key=lambda f: "\\" in f.quote or "$" in f.quote)


def _whole(text: str) -> bool:
    """A whole sentence: it opens with a capital or a digit and closes with a stop."""
    return (text[0].isupper() or text[0].isdigit()) and text.endswith((".", "!", "?"))


def _figures(text: str) -> list[str]:
    """The sentence's numbers but list marks, "(1)", and superscripts, "^2"."""
    return [
        v
        for v in numbers(text)
        if f"({v})" not in text and f"^{v}" not in text and f"^{{{v}}}" not in text
    ]


def _blanked(text: str, value: str) -> str:
    """The sentence with `value`'s first occurrence as a blank, its closing stop dropped."""
    at = _number_at(text, value)
    return (text[:at] + _BLANK + text[at + len(value) :]).rstrip(" .;:")


def _number_at(text: str, value: str) -> int:
    """Where `value` stands as a number in `text` (not inside a longer number or a word)."""
    match = re.search(rf"(?<![\w.-]){re.escape(value)}(?![\w-])", text)
    return match.start() if match else text.find(value)


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
    items: list[dict[str, object]] = []
    for fact in facts:
        question = f'What number completes this statement from the paper: "{fact.blanked}"?'
        if len(items) < wanted and _new(question, asked):
            items.append(_item(question, [fact]))
    return items


def _cross(
    facts: dict[int, list[_Fact]], wanted: int, asked: list[set[str]]
) -> list[dict[str, object]]:
    """Facts from two or three papers per question, cycling through the paper combinations."""
    papers = sorted(n for n, fs in facts.items() if fs)
    combos: list[tuple[int, ...]] = [(a, b) for i, a in enumerate(papers) for b in papers[i + 1 :]]
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
        statements = " and ".join(f'"{f.blanked}"' for f in chosen)
        question = (
            f"What numbers complete these statements from {_HOW_MANY[len(chosen)]} of the "
            f"papers: {statements}?"
        )
        if len({f.blanked for f in chosen}) == len(chosen) and _new(question, asked):
            items.append(_item(question, chosen))
    return items
