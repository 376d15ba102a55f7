"""Strict parsing of the JSON that QA generators and judges return (DESIGN §6, §8).

Only repairs that cannot change meaning are made: code fences around the reply, prose
around one JSON value, trailing commas before a closing bracket. Anything else is an
error whose message is sent back to the model on the one retry.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any, TypeVar

from tasks.llm import LLMClient, Message

__all__ = ["QAFormatError", "ask_json", "load_json_reply", "parse_qa_items"]

T = TypeVar("T")

_FENCE_RE = re.compile(r"```[a-zA-Z]*\s*\n?(.*?)```", re.S)
_TRAILING_COMMA_RE = re.compile(r",(\s*[\]}])")


class QAFormatError(ValueError):
    """A reply that is not the JSON the prompt asked for; the message tells the model why."""


def _candidates(raw: str, opener: str, closer: str) -> list[str]:
    text = raw.strip()
    fenced = _FENCE_RE.findall(text)
    found = [f.strip() for f in fenced] + [text]
    start, end = text.find(opener), text.rfind(closer)
    if start != -1 and end > start:
        found.append(text[start : end + 1])
    return found


def load_json_reply(raw: str, expect: type[list[Any]] | type[dict[str, Any]]) -> Any:
    """The JSON array or object in `raw`, after safe repairs; QAFormatError otherwise."""
    opener, closer = ("[", "]") if expect is list else ("{", "}")
    last_error = "the reply is empty"
    for candidate in _candidates(raw, opener, closer):
        for text in (candidate, _TRAILING_COMMA_RE.sub(r"\1", candidate)):
            try:
                value = json.loads(text)
            except json.JSONDecodeError as exc:
                last_error = f"invalid JSON ({exc.msg} at line {exc.lineno} column {exc.colno})"
                continue
            if isinstance(value, expect):
                return value
            last_error = f"expected a JSON {expect.__name__}, got {type(value).__name__}"
    raise QAFormatError(last_error)


def parse_qa_items(raw: str, n_papers: int) -> list[dict[str, Any]]:
    """[{"question", "answer", "evidence": [{"paper", "quote"}]}] checked field by field."""
    items = load_json_reply(raw, list)
    if not items:
        raise QAFormatError("the JSON array is empty: write the requested questions")
    parsed = []
    for i, item in enumerate(items, 1):
        where = f"item {i}"
        if not isinstance(item, dict):
            raise QAFormatError(f"{where} is not an object")
        unknown = set(item) - {"question", "answer", "evidence"}
        if unknown:
            raise QAFormatError(f"{where} has unexpected fields {sorted(unknown)}")
        question, answer = item.get("question"), item.get("answer")
        if not isinstance(question, str) or not question.strip():
            raise QAFormatError(f"{where} needs a non-empty string 'question'")
        if not isinstance(answer, str) or not answer.strip():
            raise QAFormatError(f"{where} needs a non-empty string 'answer'")
        evidence = item.get("evidence")
        if not isinstance(evidence, list) or not evidence:
            raise QAFormatError(f"{where} needs a non-empty 'evidence' list")
        spans = []
        for span in evidence:
            if not isinstance(span, dict) or set(span) != {"paper", "quote"}:
                raise QAFormatError(f"{where}: each evidence entry is {{'paper', 'quote'}}")
            paper, quote = span["paper"], span["quote"]
            if isinstance(paper, bool) or not isinstance(paper, int):
                raise QAFormatError(f"{where}: evidence 'paper' must be an integer")
            if not 1 <= paper <= n_papers:
                raise QAFormatError(f"{where}: paper {paper} is not between 1 and {n_papers}")
            if not isinstance(quote, str) or not quote.strip():
                raise QAFormatError(f"{where}: evidence 'quote' must be a non-empty string")
            spans.append({"paper": paper, "quote": quote})
        parsed.append({"question": question.strip(), "answer": answer.strip(), "evidence": spans})
    return parsed


def ask_json(
    llm: LLMClient,
    messages: list[Message],
    parse: Callable[[str], T],
    *,
    purpose: str,
    temperature: float | None = None,
    response_format: dict[str, Any] | None = None,
) -> tuple[T | None, str, str]:
    """(value, last reply, error): one retry that shows the model its unusable reply and
    what was wrong with it (DESIGN §6, §8); value is None when both replies fail.
    `response_format` goes with both asks (see `LLMClient.chat`)."""
    reply = llm.chat(
        messages, purpose=purpose, temperature=temperature, response_format=response_format
    )
    try:
        return parse(reply), reply, ""
    except QAFormatError as exc:
        fix = f"Your reply could not be used: {exc}. Reply again with only the JSON requested."
        retry = [
            *messages,
            {"role": "assistant", "content": reply},
            {"role": "user", "content": fix},
        ]
    reply = llm.chat(
        retry, purpose=f"{purpose}_retry", temperature=temperature, response_format=response_format
    )
    try:
        return parse(reply), reply, ""
    except QAFormatError as exc:
        return None, reply, str(exc)
