"""The QA quality report of one dataset version (docs/design.md §6): what was generated, what the
checks and reviewers kept, and, on the synthetic corpus, how many planted facts the
approved questions cover."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any, Protocol

from lilo.tasks.config import QASettings
from lilo.tasks.formatting import pipe_table
from lilo.tasks.qa.checks import normalise_whitespace
from lilo.tasks.qa.generate import is_ready
from lilo.tasks.records import QADecision, QAPair, Sample

__all__ = ["PlantedFact", "QualityReport", "fact_coverage", "quality_report"]


class PlantedFact(Protocol):
    """What coverage needs of a synthetic corpus's fact (tasks.synthetic.manifest.Fact)."""

    @property
    def arxiv_id(self) -> str: ...

    @property
    def term(self) -> str: ...

    @property
    def value(self) -> str: ...


@dataclass(frozen=True)
class QualityReport:
    dataset_version: str
    samples: int
    samples_ready: int
    generated: int  # every record the generator produced, failed attempts included
    failed_attempts: int  # replies still unusable after the retry
    invalid: dict[str, int]  # evidence / cross checks, by kind of reason
    filtered: dict[str, int]  # the LLM filter's reasons
    duplicates: int
    pending: int
    approved: int
    auto_approved: int
    rejected: int
    edited: int  # pairs approved with an edit
    decisions: int
    reviewers: dict[str, int]  # decisions per reviewer
    coverage: dict[str, Any] = field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)

    def as_markdown(self) -> str:
        """Two columns, measure and value, for the Prefect UI."""
        rows = []
        for name, value in self.as_dict().items():
            if name == "dataset_version" or value in ({}, None):
                continue
            if isinstance(value, dict):
                value = ", ".join(f"{k}: {v}" for k, v in value.items())
            rows.append([name.replace("_", " "), value])
        table = pipe_table(["measure", "value"], rows)
        return f"# QA quality, dataset {self.dataset_version}\n\n{table}"


def quality_report(
    samples: list[Sample],
    pairs_by_sample: dict[str, list[QAPair]],
    decisions: list[QADecision],
    dataset_version: str,
    qa: QASettings,
    facts: Iterable[PlantedFact] = (),
) -> QualityReport:
    """Counts over the samples' pairs and decisions, plus planted-fact coverage if given."""
    pairs = [p for s in samples for p in pairs_by_sample.get(s.sample_id, [])]
    status = Counter(p.status for p in pairs)
    invalid = [p for p in pairs if p.status == "invalid"]
    edited = {d.qa_id for d in decisions if d.action == "edit"}
    approved = [p for p in pairs if p.status == "approved"]
    facts = list(facts)
    return QualityReport(
        dataset_version=dataset_version,
        samples=len(samples),
        samples_ready=sum(is_ready(pairs_by_sample.get(s.sample_id, []), qa) for s in samples),
        generated=len(pairs),
        failed_attempts=sum(not p.question for p in invalid),
        invalid=dict(Counter(p.reason.split(":", 1)[0] for p in invalid).most_common()),
        filtered=dict(Counter(p.reason for p in pairs if p.status == "filtered").most_common()),
        duplicates=status["duplicate"],
        pending=status["pending"],
        approved=len(approved),
        auto_approved=sum(p.reviewer == "auto" for p in approved),
        rejected=status["rejected"],
        edited=sum(p.qa_id in edited for p in approved),
        decisions=len(decisions),
        reviewers=dict(Counter(d.reviewer for d in decisions).most_common()),
        coverage=fact_coverage(approved, facts, {p for s in samples for p in s.paper_ids})
        if facts
        else {},
    )


def fact_coverage(
    approved: list[QAPair], facts: list[PlantedFact], sampled: set[str]
) -> dict[str, Any]:
    """Share of planted facts that some approved pair covers: one of its evidence quotes,
    from the fact's paper, states the fact's term and value.

    Two denominators: facts of papers in the version's samples (what QA could cover) and
    all planted facts (papers left out of samples or quarantined count as uncovered).
    """
    quotes: dict[str, list[str]] = {}
    for pair in approved:
        for span in pair.evidence:
            quotes.setdefault(span["paper_id"], []).append(normalise_whitespace(span["quote"]))
    covered = [
        f for f in facts if any(f.term in q and f.value in q for q in quotes.get(f.arxiv_id, []))
    ]
    in_samples = [f for f in facts if f.arxiv_id in sampled]
    return {
        "facts": len(facts),
        "facts_in_sampled_papers": len(in_samples),
        "covered": len(covered),
        "share_of_sampled": round(len(covered) / len(in_samples), 4) if in_samples else 0.0,
        "share_of_all": round(len(covered) / len(facts), 4),
    }
