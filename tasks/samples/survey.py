"""A survey's archive, read: its references (with arXiv ids) and its citation groups."""

from __future__ import annotations

import tempfile
from dataclasses import dataclass
from pathlib import Path

from tasks.clean.errors import Quarantined
from tasks.clean.extract import extract_archive
from tasks.clean.latex import clean_source
from tasks.config import Settings
from tasks.records import Quarantine, RawSource
from tasks.samples.citations import CitationGroup, citation_groups, find_citations
from tasks.samples.references import Reference, read_references

__all__ = ["SurveyRead", "read_survey"]


@dataclass(frozen=True)
class SurveyRead:
    survey_id: str
    title: str
    main_file: str
    references: tuple[Reference, ...]
    groups: tuple[CitationGroup, ...]

    @property
    def paper_ids(self) -> list[str]:
        """Resolved arXiv ids, in bibliography order, without repeats."""
        return list(dict.fromkeys(r.arxiv_id for r in self.references if r.arxiv_id))


def read_survey(raw: RawSource, settings: Settings) -> SurveyRead | Quarantine:
    """Unpack a survey e-print in a temporary folder, resolve its bibliography and group
    the papers it cites together (DESIGN §5). Bad input becomes a Quarantine record."""
    with tempfile.TemporaryDirectory(prefix="lilo-survey-") as tmp:
        folder = Path(tmp)
        try:
            extract_archive(Path(raw.path), folder, settings)
            cleaned = clean_source(folder, settings)
            references = read_references(folder, cleaned.main_file)
        except Quarantined as exc:
            return Quarantine(raw.arxiv_id, "survey", exc.reason, exc.detail)
    key_to_id = {r.key: r.arxiv_id for r in references if r.arxiv_id}
    groups = citation_groups(find_citations(cleaned.text), key_to_id, raw.arxiv_id)
    return SurveyRead(
        survey_id=raw.arxiv_id,
        title=cleaned.title or raw.title,
        main_file=cleaned.main_file,
        references=tuple(references),
        groups=tuple(groups),
    )
