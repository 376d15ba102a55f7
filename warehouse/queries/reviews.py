"""The QA review: pairs waiting for a reviewer, their decisions, and what a reviewer names."""

from __future__ import annotations

import json

from lilo.tasks.records import QADecision
from lilo.warehouse.queries._read import Source, rows, scalar, tuples

__all__ = ["load_decisions", "titles_of", "pending_count", "review_ids", "waiting_note"]


def pending_count(source: Source, version: str) -> int:
    """Pairs of the version waiting for a reviewer."""
    return int(
        scalar(
            source,
            "SELECT count(*) FROM fct_qa_pairs q JOIN dim_samples s USING (sample_id) "
            "WHERE s.dataset_version = ? AND q.status = 'pending'",
            [version],
        )
    )


def waiting_note(source: Source) -> str:
    """ "N QA pairs of M samples wait for review: ..." for every dataset version, or "" when
    none waits: why a command finds nothing to show, and what to do."""
    pairs, samples = tuples(
        source,
        "SELECT count(*), count(DISTINCT sample_id) FROM fct_qa_pairs WHERE status = 'pending'",
    )[0]
    if not pairs:
        return ""
    return (
        f"{pairs} QA pair{'' if pairs == 1 else 's'} of {samples} sample"
        f"{'' if samples == 1 else 's'} wait for review, and their samples are summarized "
        "once approved: `lilo review ui` (a form in the Prefect UI), or `lilo review export "
        "pending.jsonl` then `lilo review import pending.jsonl`"
    )


def load_decisions(source: Source, version: str) -> list[QADecision]:
    """The version's review decisions, in the order they were made."""
    return [
        QADecision(**{**r, "evidence": tuple(json.loads(r["evidence"] or "[]"))})
        for r in rows(
            source,
            "SELECT d.* EXCLUDE (run_id) FROM fct_qa_decisions d JOIN dim_samples s "
            "USING (sample_id) WHERE s.dataset_version = ? ORDER BY d.decided_at, d.decision_id",
            [version],
        )
    ]


def titles_of(source: Source, paper_ids: list[str]) -> dict[str, str]:
    """Title by paper id, of the clean papers among `paper_ids` ('' where none)."""
    return {
        r["paper_id"]: r["title"] or ""
        for r in rows(
            source,
            "SELECT paper_id, title FROM dim_papers WHERE list_contains(?, paper_id)",
            [paper_ids],
        )
    }


def review_ids(source: Source, version: str) -> tuple[list[str], list[str]]:
    """The version's sample ids and QA pair ids, each sorted: what a reviewer may name."""
    samples = tuples(
        source,
        "SELECT sample_id FROM dim_samples WHERE dataset_version = ? ORDER BY 1",
        [version],
    )
    pairs = tuples(
        source,
        "SELECT q.qa_id FROM fct_qa_pairs q JOIN dim_samples s USING (sample_id) "
        "WHERE s.dataset_version = ? ORDER BY 1",
        [version],
    )
    return [r[0] for r in samples], [r[0] for r in pairs]
