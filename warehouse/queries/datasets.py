"""Dataset versions, their samples, QA pairs and assets."""

from __future__ import annotations

import json
from typing import Any

from lilo.tasks.records import DatasetStats, QAPair, Sample, SurveyStats
from lilo.warehouse.queries._read import Source, rows, scalar, tuples

__all__ = [
    "approved_single_pairs",
    "dataset_assets",
    "dataset_exists",
    "dataset_overview",
    "dataset_samples",
    "dataset_surveys",
    "dataset_versions",
    "load_dataset_stats",
    "load_qa",
    "load_samples",
    "next_dataset_number",
    "qa_answers",
    "sample_ids",
    "sample_papers",
]


def dataset_exists(source: Source, version: str) -> bool:
    """Whether the version's row is written (a version is immutable once it is)."""
    return bool(
        scalar(
            source, "SELECT count(*) FROM dim_dataset_versions WHERE dataset_version = ?", [version]
        )
    )


def dataset_samples(source: Source, version: str) -> int | None:
    """The number of samples the version was written with; None while it is not."""
    return scalar(
        source, "SELECT n_samples FROM dim_dataset_versions WHERE dataset_version = ?", [version]
    )


def dataset_surveys(source: Source, version: str) -> list[str] | None:
    """The surveys the version was built from; None while it is not written."""
    found = tuples(
        source, "SELECT surveys FROM dim_dataset_versions WHERE dataset_version = ?", [version]
    )
    return list(found[0][0] or ()) if found else None


def dataset_overview(source: Source) -> list[dict[str, Any]]:
    """Each dataset version written, in the order it was: its number, when, its samples,
    papers and surveys (none for an imported benchmark), and its result versions (how many,
    the latest)."""
    return rows(
        source,
        """
SELECT d.dataset_version, d.number, d.created_at, d.n_samples, d.n_papers,
    len(coalesce(d.surveys, [])) AS surveys, count(r.version) AS result_versions,
    max(r.version) AS latest_result_version
FROM dim_dataset_versions AS d
LEFT JOIN res_versions AS r USING (dataset_version)
GROUP BY ALL
ORDER BY d.number
""",
    )


def dataset_versions(source: Source) -> list[str]:
    """The dataset versions written, in the order they were."""
    return [
        r[0]
        for r in tuples(source, "SELECT dataset_version FROM dim_dataset_versions ORDER BY number")
    ]


def next_dataset_number(source: Source) -> int:
    """The number the next dataset version gets (1, 2, ... in the order they are written)."""
    return int(scalar(source, "SELECT coalesce(max(number), 0) + 1 FROM dim_dataset_versions"))


def sample_ids(source: Source, version: str) -> set[str]:
    return {
        r[0]
        for r in tuples(
            source, "SELECT sample_id FROM dim_samples WHERE dataset_version = ?", [version]
        )
    }


def load_samples(source: Source, version: str, complete: bool = False) -> list[Sample]:
    """The version's samples; `complete=True`: only those whose papers are all clean now (a
    paper a newer cleaner rejects leaves dim_papers, and the samples stage says which)."""
    return [
        Sample(
            **{
                **r,
                "paper_ids": tuple(r["paper_ids"]),
                "listing_order": tuple(r["listing_order"]) if r["listing_order"] else None,
            }
        )
        for r in rows(
            source,
            "SELECT * EXCLUDE (run_id) FROM dim_samples WHERE dataset_version = ? "
            "AND (NOT ? OR NOT EXISTS (SELECT 1 FROM unnest(paper_ids) AS u(paper_id) "
            "WHERE u.paper_id NOT IN (SELECT paper_id FROM dim_papers))) ORDER BY sample_id",
            [version, complete],
        )
    ]


def load_qa(source: Source, version: str) -> dict[str, list[QAPair]]:
    """The version's QA pairs by sample, by round and id."""
    by_sample: dict[str, list[QAPair]] = {}
    for r in rows(
        source,
        "SELECT q.* EXCLUDE (run_id) FROM fct_qa_pairs q JOIN dim_samples s USING (sample_id) "
        "WHERE s.dataset_version = ? ORDER BY q.round, q.qa_id",
        [version],
    ):
        pair = _qa_pair(r)
        by_sample.setdefault(pair.sample_id, []).append(pair)
    return by_sample


def approved_single_pairs(source: Source) -> list[QAPair]:
    """Every approved single-paper QA pair, of any dataset version, by id."""
    return [
        _qa_pair(r)
        for r in rows(
            source,
            "SELECT * EXCLUDE (run_id) FROM fct_qa_pairs WHERE status = 'approved' "
            "AND kind = 'single' ORDER BY qa_id",
        )
    ]


def _qa_pair(row: dict[str, Any]) -> QAPair:
    return QAPair(
        **{
            **row,
            "paper_ids": tuple(row["paper_ids"]),
            "evidence": tuple(json.loads(row["evidence"] or "[]")),
        }
    )


def sample_papers(source: Source) -> dict[str, list[str]]:
    """Sample id -> its paper ids, over every dataset version."""
    return {
        r[0]: list(r[1]) for r in tuples(source, "SELECT sample_id, paper_ids FROM dim_samples")
    }


def qa_answers(source: Source, version: str) -> dict[str, str]:
    """QA id -> its gold answer, over the version's samples."""
    return dict(
        tuples(
            source,
            "SELECT q.qa_id, q.answer FROM fct_qa_pairs AS q JOIN dim_samples AS d "
            "USING (sample_id) WHERE d.dataset_version = ?",
            [version],
        )
    )


def dataset_assets(source: Source, version: str) -> dict[str, str]:
    """The files the version carries (an imported benchmark's prompt pack), by name."""
    return dict(
        tuples(
            source,
            "SELECT name, content FROM dim_dataset_assets WHERE dataset_version = ?",
            [version],
        )
    )


def load_dataset_stats(source: Source, version: str) -> DatasetStats:
    """A dataset version's statistics (from a read-only connection too)."""
    meta = rows(source, "SELECT * FROM dim_dataset_versions WHERE dataset_version = ?", [version])
    samples = rows(
        source,
        "SELECT survey_id, paper_ids, input_words FROM dim_samples WHERE dataset_version = ? "
        "ORDER BY sample_id",
        [version],
    )
    survey_ids = list(
        dict.fromkeys([*(meta[0]["surveys"] if meta else []), *(s["survey_id"] for s in samples)])
    )
    surveys = {
        r["survey_id"]: r
        for r in rows(
            source,
            "SELECT survey_id, title, n_references, n_resolved FROM dim_surveys "
            "WHERE list_contains(?, survey_id)",
            [survey_ids],
        )
    }
    how = rows(
        source,
        "SELECT how, count(*) AS n FROM dim_survey_references "
        "WHERE list_contains(?, survey_id) GROUP BY how",
        [survey_ids],
    )
    return DatasetStats(
        dataset_version=version,
        number=meta[0]["number"] if meta else None,
        input_words=tuple(s["input_words"] for s in samples),
        papers=len({p for s in samples for p in s["paper_ids"]}),
        surveys=tuple(
            SurveyStats(
                survey_id=i,
                title=surveys.get(i, {}).get("title") or "",
                references=surveys.get(i, {}).get("n_references") or 0,
                resolved=surveys.get(i, {}).get("n_resolved") or 0,
                samples=sum(1 for s in samples if s["survey_id"] == i),
            )
            for i in survey_ids
        ),
        how={r["how"]: r["n"] for r in how},
    )
