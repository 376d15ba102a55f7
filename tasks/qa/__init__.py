"""QA pairs for samples (docs/design.md §6): generation, checks, filter, dedup and the quota
loop."""

from lilo.tasks.qa.checks import (
    cross_problem,
    evidence_problem,
    filter_pair,
    near_duplicates,
    normalise_whitespace,
)
from lilo.tasks.qa.generate import (
    PROMPT_VERSION,
    QAResult,
    generate_qa,
    is_ready,
    waiting_for_review,
)
from lilo.tasks.qa.parse import QAFormatError, ask_json, load_json_reply, parse_qa_items
from lilo.tasks.qa.report import QualityReport, fact_coverage, quality_report
from lilo.tasks.qa.review import (
    REVIEWABLE,
    Applied,
    FileVerdict,
    NotRecorded,
    ReviewError,
    Verdict,
    apply_verdicts,
    auto_decisions,
    decide,
    export_record,
    reviewer_problem,
)

__all__ = [
    "PROMPT_VERSION",
    "REVIEWABLE",
    "Applied",
    "FileVerdict",
    "QAFormatError",
    "NotRecorded",
    "QAResult",
    "QualityReport",
    "ReviewError",
    "Verdict",
    "apply_verdicts",
    "ask_json",
    "auto_decisions",
    "cross_problem",
    "decide",
    "evidence_problem",
    "export_record",
    "fact_coverage",
    "filter_pair",
    "generate_qa",
    "is_ready",
    "load_json_reply",
    "near_duplicates",
    "normalise_whitespace",
    "parse_qa_items",
    "quality_report",
    "reviewer_problem",
    "waiting_for_review",
]
