"""The QA prompts (docs/design.md §6). Their instruction lines carry the phrases the offline
engine's handlers key on (`tasks/llm/offline/qa_generate.py`, `qa_filter.py`); a change
of wording here is a change of PROMPT_VERSION."""

from __future__ import annotations

from lilo.tasks.llm import Message
from lilo.tasks.paper_tags import paper_blocks

__all__ = ["PROMPT_VERSION", "filter_messages", "generate_messages"]

PROMPT_VERSION = "qa-v2"

_SYSTEM = "You write and check reading-comprehension questions about research papers."

_KIND_RULES = {
    "single": (
        "Kind: single-context. Every question must be answerable from paper 1 alone, "
        "and all its evidence comes from paper 1."
    ),
    "cross": (
        "Kind: cross-context. Every question must need facts from at least two different "
        "papers (compare, contrast or combine them), with evidence from each paper it uses."
    ),
}


def generate_messages(
    kind: str, n: int, topic: str, texts: list[str], existing: list[str]
) -> list[Message]:
    """Ask for `n` pairs of one kind; `existing` questions are listed so new ones differ."""
    avoid = ""
    if existing:
        listed = "\n".join(f"- {q}" for q in existing)
        avoid = f"\nExisting questions (write new ones, different from these):\n{listed}\n"
    user = (
        "Write question-answer pairs for a long-text summarisation benchmark.\n"
        f"{_KIND_RULES[kind]}\n"
        f"Number of pairs: {n}\n"
        "Rules:\n"
        "- ask about specific content: results and numbers, methods, datasets, definitions;\n"
        "- no yes/no questions and nothing trivial;\n"
        "- the answer is complete, self-contained and correct according to the papers;\n"
        "- evidence quotes are copied verbatim from the paper they name (paper number as "
        "in the tags below) and together support the whole answer.\n"
        f"{avoid}"
        'Reply with only a JSON object: {"pairs": [{"question": "...", "answer": "...", '
        '"evidence": [{"paper": 1, "quote": "..."}]}]}\n\n'
        f"Topic: {topic}\n\n{paper_blocks(texts)}"
    )
    return [{"role": "system", "content": _SYSTEM}, {"role": "user", "content": user}]


def filter_messages(question: str, answer: str, texts: list[str]) -> list[Message]:
    """One pair against the papers it may draw on (docs/design.md §6 filter pass)."""
    user = (
        "Decide whether this benchmark question-answer pair should be kept.\n"
        "Keep it only if the question can be answered from the papers below alone, is not "
        "trivial, is not a yes/no question, and the answer is correct according to the papers.\n"
        'Reply with only a JSON object: {"keep": true or false, "reason": "..."}\n\n'
        f"<question>{question}</question>\n<answer>{answer}</answer>\n\n{paper_blocks(texts)}"
    )
    return [{"role": "system", "content": _SYSTEM}, {"role": "user", "content": user}]
