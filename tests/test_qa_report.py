"""The QA quality report: counts by status and reason, and planted-fact coverage."""

from __future__ import annotations

from datetime import datetime

from lilo.tasks.config import QASettings, Settings
from lilo.tasks.qa import decide, quality_report
from lilo.tasks.records import QAPair, Sample
from lilo.tasks.synthetic.manifest import Fact


def _pair(qa_id: str, status: str, reason: str = "", quote: str = "", kind: str = "single"):
    evidence = ({"paper_id": "p1", "quote": quote},) if quote else ()
    question = "" if reason.startswith("unusable") else f"Question {qa_id}?"
    return QAPair(
        qa_id, "s1", kind, ("p1",), question, "answer", evidence, status, 1, "", reason, "v", "b"
    )


def test_counts_reasons_and_planted_fact_coverage():
    facts = [
        Fact(
            "p1-f1",
            "p1",
            "KernelForge obtains a test RMSE of 0.635.",
            "KernelForge",
            "0.635",
            "Kin40k",
            "RMSE",
        ),
        Fact("p1-f2", "p1", "KernelForge needs 3.5 GPU hours.", "KernelForge", "3.5", "-", "cost"),
        Fact("p9-f1", "p9", "WarpGP reaches 0.534.", "WarpGP", "0.534", "-", "RMSE"),
    ]
    approved, record = decide(
        _pair("a", "pending", quote="KernelForge  obtains a test RMSE of 0.635."),
        "approve",
        "ana",
        "cli",
        datetime(2026, 1, 1),
        answer="An RMSE of 0.635.",
    )
    pairs = [
        approved,
        _pair("b", "pending", quote="KernelForge needs 3.5 GPU hours."),  # not approved: no cover
        _pair("c", "invalid", "evidence quote not in the paper: p1 'x'"),
        _pair("d", "invalid", "evidence quote not in the paper: p1 'y'"),
        _pair("e", "invalid", "unusable reply after a retry: invalid JSON; raw output: ..."),
        _pair("f", "filtered", "yes/no question (opens with 'is')"),
        _pair("g", "duplicate", "near-duplicate of: Question a?"),
        _pair("h", "rejected", "ambiguous"),
    ]
    sample = Sample("s1", "v1", ("p1",), "t", "sv", 100, "command")
    report = quality_report(
        [sample], {"s1": pairs}, [record], Settings().dataset_version, QASettings(), facts
    )
    assert (report.generated, report.failed_attempts, report.duplicates) == (8, 1, 1)
    assert report.invalid == {
        "evidence quote not in the paper": 2,
        "unusable reply after a retry": 1,
    }
    assert report.filtered == {"yes/no question (opens with 'is')": 1}
    assert (report.approved, report.edited, report.rejected, report.pending) == (1, 1, 1, 1)
    assert report.reviewers == {"ana": 1} and report.samples_ready == 0
    assert report.coverage == {
        "facts": 3,
        "facts_in_sampled_papers": 2,
        "covered": 1,
        "share_of_sampled": 0.5,
        "share_of_all": 0.3333,
    }
