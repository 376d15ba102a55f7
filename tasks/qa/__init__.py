"""QA pairs for samples (DESIGN §6): generation, checks, filter, dedup and the quota loop."""

from tasks.qa.checks import (
    cross_problem,
    evidence_problem,
    filter_pair,
    near_duplicates,
    normalise_whitespace,
)
from tasks.qa.generate import PROMPT_VERSION, QAResult, generate_qa, is_ready
from tasks.qa.parse import QAFormatError, ask_json, load_json_reply, parse_qa_items

__all__ = [
    "PROMPT_VERSION",
    "QAFormatError",
    "QAResult",
    "ask_json",
    "cross_problem",
    "evidence_problem",
    "filter_pair",
    "generate_qa",
    "is_ready",
    "load_json_reply",
    "near_duplicates",
    "normalise_whitespace",
    "parse_qa_items",
]
