"""Strict parsing of the JSON that QA generators and judges return (docs/design.md §6, §8): the
JSON value found in the reply, then validated as a pydantic model of what was asked.

Only repairs that cannot change meaning are made: code fences around the reply, prose
around one JSON value, trailing commas before a closing bracket. Anything else is an
error whose message is sent back to the model on the one retry. A reply cut at its output
budget is not parsed at all: its error is "truncated".

lilo's own JSON calls ask for their shape as a JSON schema (`response_format`, structured
output), which llama.cpp, vLLM and OpenAI enforce while the model writes; an endpoint
without it is asked the same prompt for free JSON.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Annotated, Any, TypeVar

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    StringConstraints,
    ValidationError,
    ValidationInfo,
    field_validator,
)

from lilo.tasks.errors import LiloError
from lilo.tasks.llm import Completion, LLMClient, Message, ResponseFormatUnsupported

__all__ = [
    "QA_SCHEMA",
    "TIERS",
    "VERDICT_SCHEMA",
    "Evidence",
    "QAFormatError",
    "QAItem",
    "Verdict",
    "ask_json",
    "json_schema",
    "load_json_reply",
    "object_schema",
    "parse_qa_items",
    "parse_reply",
    "tier_value",
]

T = TypeVar("T")

_FENCE_RE = re.compile(r"```[a-zA-Z]*\s*\n?(.*?)```", re.S)
_TRAILING_COMMA_RE = re.compile(r",(\s*[\]}])")


class QAFormatError(LiloError):
    """A reply that is not the JSON the prompt asked for; the message tells the model why."""


def _candidates(raw: str, opener: str, closer: str) -> list[str]:
    text = raw.strip()
    fenced = _FENCE_RE.findall(text)
    found = [f.strip() for f in fenced] + [text]
    start, end = text.find(opener), text.rfind(closer)
    if start != -1 and end > start:
        found.append(text[start : end + 1])
    return found


# The judges' score tiers (docs/design.md §8): the QA grade, the checklist and the review of
# the judge's grades (tasks/qa/grade_review.py) all use them.
TIERS = (0.0, 0.25, 0.5, 0.75, 1.0)


def tier_value(value: Any) -> float:
    """A judge's score, which must be one of the tiers: no snapping, a miss is an error. A
    tier written as a string ("0.75", as the benchmark's own example output shows) counts."""
    if isinstance(value, str):
        try:
            value = float(value.strip())
        except ValueError:
            value = None
    if isinstance(value, bool) or not isinstance(value, int | float) or value not in TIERS:
        raise QAFormatError(f"score must be one of 0, 0.25, 0.5, 0.75, 1; got {value!r}")
    return float(value)


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


_Text = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1)]


class Evidence(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)

    paper: int
    quote: str  # kept as written: it is looked up in the paper

    @field_validator("quote")
    @classmethod
    def _a_quote(cls, quote: str) -> str:
        if not quote.strip():
            raise ValueError("a quote must not be empty")
        return quote

    @field_validator("paper")
    @classmethod
    def _a_paper_shown(cls, paper: int, info: ValidationInfo) -> int:
        n_papers = (info.context or {}).get("n_papers", paper)
        if not 1 <= paper <= n_papers:
            raise ValueError(f"paper {paper} is not between 1 and {n_papers}")
        return paper


class QAItem(BaseModel):
    """One generated QA pair, as the prompt asks for it (tasks/qa/prompts.py)."""

    model_config = ConfigDict(extra="forbid", strict=True)

    question: _Text
    answer: _Text
    evidence: list[Evidence] = Field(min_length=1)


class Verdict(BaseModel):
    """The QA filter's reply: keep the pair or not, and why."""

    model_config = ConfigDict(strict=True)

    keep: bool
    reason: str


M = TypeVar("M", bound=BaseModel)


def parse_reply(value: Any, model: type[M], where: str, **context: Any) -> M:
    """`value` (loaded JSON) as `model`; QAFormatError naming each field that is wrong."""
    try:
        return model.model_validate(value, context=context)
    except ValidationError as exc:
        raise QAFormatError(f"{where}: {_problems(exc)}") from None


def _problems(exc: ValidationError) -> str:
    problems = []
    for error in exc.errors(include_url=False):
        field = ".".join(str(part) for part in error["loc"])
        message = error["msg"].removeprefix("Value error, ")
        if error["type"] == "extra_forbidden":
            problems.append(f"unexpected field '{field}'")
        else:
            problems.append(f"'{field}': {message}" if field else f"{message} (a JSON object)")
    return "; ".join(problems)


def json_schema(name: str, schema: dict[str, Any]) -> dict[str, Any]:
    """`response_format` asking for `schema`, in the strict form OpenAI, vLLM and
    llama.cpp take: every property required, none other allowed, an object at the top."""
    return {"type": "json_schema", "json_schema": {"name": name, "schema": schema, "strict": True}}


def object_schema(**properties: Any) -> dict[str, Any]:
    """A JSON schema object whose every property is required and no other allowed."""
    return {
        "type": "object",
        "properties": properties,
        "required": list(properties),
        "additionalProperties": False,
    }


_STRING = {"type": "string"}
# The QA prompt's reply (tasks/qa/prompts.py): {"pairs": [QAItem, ...]}.
QA_SCHEMA = json_schema(
    "qa_pairs",
    object_schema(
        pairs={
            "type": "array",
            "items": object_schema(
                question=_STRING,
                answer=_STRING,
                evidence={
                    "type": "array",
                    "items": object_schema(paper={"type": "integer"}, quote=_STRING),
                },
            ),
        }
    ),
)
# The QA filter's reply: a `Verdict`.
VERDICT_SCHEMA = json_schema("verdict", object_schema(keep={"type": "boolean"}, reason=_STRING))


def parse_qa_items(raw: str, n_papers: int) -> list[dict[str, Any]]:
    """[{"question", "answer", "evidence": [{"paper", "quote"}]}], each item a `QAItem`,
    from `{"pairs": [...]}` as asked, or the bare array."""
    try:
        items = load_json_reply(raw, dict).get("pairs")
    except QAFormatError:
        items = None
    if not isinstance(items, list):
        try:
            items = load_json_reply(raw, list)
        except QAFormatError as exc:
            raise QAFormatError(f'expected {{"pairs": [...]}}; {exc}') from None
    if not items:
        raise QAFormatError("the JSON array is empty: write the requested questions")
    return [
        parse_reply(item, QAItem, f"item {i}", n_papers=n_papers).model_dump()
        for i, item in enumerate(items, 1)
    ]


def ask_json(
    llm: LLMClient,
    messages: list[Message],
    parse: Callable[[str], T],
    *,
    purpose: str,
    temperature: float | None = None,
    max_tokens: int | None = None,
    response_format: dict[str, Any] | None = None,
    fallback: bool = True,
) -> tuple[T | None, str, str]:
    """(value, last reply, error): one retry that shows the model its unusable reply and
    what was wrong with it (docs/design.md §6, §8); value is None when both replies fail.
    `response_format` goes with both asks (see `LLMClient.complete`); an endpoint that
    rejects it is asked the same prompt without it, or, with `fallback` off, raises
    ResponseFormatUnsupported (the caller records which it used)."""
    try:
        return _ask_twice(llm, messages, parse, purpose, temperature, max_tokens, response_format)
    except ResponseFormatUnsupported:
        if response_format is None or not fallback:
            raise
    return _ask_twice(llm, messages, parse, purpose, temperature, max_tokens, None)


def _ask_twice(
    llm: LLMClient,
    messages: list[Message],
    parse: Callable[[str], T],
    purpose: str,
    temperature: float | None,
    max_tokens: int | None,
    response_format: dict[str, Any] | None,
) -> tuple[T | None, str, str]:
    ask: dict[str, Any] = {
        "temperature": temperature,
        "max_tokens": max_tokens,
        "response_format": response_format,
    }
    reply = llm.complete(messages, purpose=purpose, **ask)
    try:
        return _read(reply, parse), reply.text, ""
    except QAFormatError as exc:
        fix = f"Your reply could not be used: {exc}. Reply again with only the JSON requested."
        retry = [
            *messages,
            {"role": "assistant", "content": reply.text},
            {"role": "user", "content": fix},
        ]
    reply = llm.complete(retry, purpose=f"{purpose}_retry", **ask)
    try:
        return _read(reply, parse), reply.text, ""
    except QAFormatError as exc:
        return None, reply.text, str(exc)


def _read(reply: Completion, parse: Callable[[str], T]) -> T:
    """The parsed reply; a reply cut at its budget is not read as if it were whole."""
    if reply.truncated:
        raise QAFormatError(
            f"truncated: the reply was cut at its output limit ({reply.tokens_out} tokens) "
            "before it ended; write a shorter one"
        )
    return parse(reply.text)
