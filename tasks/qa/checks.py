"""The checks every generated QA pair goes through, in docs/design.md §6 order: evidence found in
the papers, cross pairs spanning papers, the LLM filter, then near-duplicate removal."""

from __future__ import annotations

import re

import numpy as np

from lilo.tasks.config import JudgeSettings, QASettings
from lilo.tasks.embeddings import Embedder
from lilo.tasks.llm import LLMClient
from lilo.tasks.qa.parse import VERDICT_SCHEMA, Verdict, ask_json, load_json_reply, parse_reply
from lilo.tasks.qa.prompts import filter_messages

__all__ = [
    "cross_problem",
    "evidence_problem",
    "filter_pair",
    "near_duplicates",
    "normalise_whitespace",
]

_WS_RE = re.compile(r"\s+")


def normalise_whitespace(text: str) -> str:
    """Quotes are compared modulo whitespace: models reflow lines, never words."""
    return _WS_RE.sub(" ", text).strip()


def evidence_problem(evidence: list[dict[str, str]], normalised_texts: dict[str, str]) -> str:
    """Why the evidence fails ("" when every quote occurs in the paper it names).

    Reasons here and below read "<kind>: <detail>": the quality report groups by kind."""
    for span in evidence:
        text = normalised_texts.get(span["paper_id"])
        if text is None:
            return f"evidence from a paper outside the sample: {span['paper_id']}"
        if normalise_whitespace(span["quote"]) not in text:
            quote = normalise_whitespace(span["quote"])[:120]
            return f"evidence quote not in the paper: {span['paper_id']} {quote!r}"
    return ""


def cross_problem(paper_ids: tuple[str, ...]) -> str:
    """A cross-context pair must rest on at least two papers (docs/design.md §6)."""
    if len(set(paper_ids)) < 2:
        return f"cross pair rests on one paper: evidence from {len(set(paper_ids))}, needs 2+"
    return ""


def filter_pair(
    question: str,
    answer: str,
    texts: list[str],
    qa: QASettings,
    judge: JudgeSettings,
    llm: LLMClient,
) -> tuple[bool, str]:
    """The LLM filter: answerable from the papers alone, not trivial, not yes/no.

    A verdict still unusable after the retry drops the pair: a pair nobody could vouch
    for must not reach the benchmark.
    """
    verdict, _, error = ask_json(
        llm,
        filter_messages(question, answer, texts),
        _verdict,
        purpose="qa_filter",
        temperature=judge.temperature,
        max_tokens=qa.filter_max_tokens,
        response_format=VERDICT_SCHEMA,
    )
    return verdict if verdict is not None else (False, f"filter reply unusable: {error}")


def _verdict(reply: str) -> tuple[bool, str]:
    verdict = parse_reply(load_json_reply(reply, dict), Verdict, 'expected {"keep", "reason"}')
    return verdict.keep, verdict.reason


def near_duplicates(
    kept: list[str], candidates: list[str], embedder: Embedder, threshold: float
) -> list[str]:
    """For each candidate in order, the earlier question it nearly repeats ("" if none).

    Candidates that survive join the pool, so two new near-identical questions keep only
    the first. Cosine above `threshold` on normalised embeddings counts as a duplicate.
    """
    if not candidates:
        return []
    vectors = embedder.embed(kept + candidates)
    pool = list(range(len(kept)))
    texts = kept + candidates
    found = []
    for i in range(len(kept), len(texts)):
        sims = vectors[pool] @ vectors[i] if pool else np.zeros(0)
        best = int(np.argmax(sims)) if len(sims) else -1
        if best >= 0 and sims[best] > threshold:
            found.append(texts[pool[best]])
        else:
            found.append("")
            pool.append(i)
    return found
