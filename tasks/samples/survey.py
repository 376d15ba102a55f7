"""A survey's archive, read: its references (with arXiv ids) and its citation groups."""

from __future__ import annotations

import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from tasks.clean.errors import Quarantined
from tasks.clean.extract import extract_archive
from tasks.clean.latex import Cleaned, clean_source
from tasks.config import Settings
from tasks.records import Quarantine, RawSource
from tasks.samples.citations import CitationGroup, citation_groups, find_citations
from tasks.samples.references import Reference, read_references
from tasks.samples.title_search import resolve_titles

__all__ = ["SurveyRead", "read_survey", "survey_references"]


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
    the papers it cites together (DESIGN §5). Bad input becomes a Quarantine record: a known
    problem under its reason, anything else (a parser or decode error) as `survey_unreadable`,
    so one bad survey cannot stop the fetch."""
    try:
        with _unpacked(Path(raw.path), settings) as folder:
            cleaned, references = _read(folder, settings)
    except Quarantined as exc:
        return Quarantine(raw.arxiv_id, "survey", exc.reason, exc.detail)
    except Exception as exc:  # one survey's failure must not stop the stage
        detail = f"{type(exc).__name__}: {exc}"
        return Quarantine(raw.arxiv_id, "fetch", "survey_unreadable", detail)
    key_to_id = {r.key: r.arxiv_id for r in references if r.arxiv_id}
    groups = citation_groups(find_citations(cleaned.text), key_to_id, raw.arxiv_id)
    return SurveyRead(
        survey_id=raw.arxiv_id,
        title=cleaned.title or raw.title,
        main_file=cleaned.main_file,
        references=tuple(references),
        groups=tuple(groups),
    )


def survey_references(path: Path, settings: Settings) -> list[Reference]:
    """The resolved bibliography of the survey at `path`: a source folder or an e-print
    archive. Raises `Quarantined` for an archive or folder that cannot be read as a paper."""
    if path.is_dir():
        return _read(path, settings)[1]
    with _unpacked(path, settings) as folder:
        return _read(folder, settings)[1]


@contextmanager
def _unpacked(archive: Path, settings: Settings) -> Iterator[Path]:
    with tempfile.TemporaryDirectory(prefix="lilo-survey-") as tmp:
        extract_archive(archive, Path(tmp), settings)
        yield Path(tmp)


def _read(folder: Path, settings: Settings) -> tuple[Cleaned, list[Reference]]:
    """The cleaned main file (it names the bibliography) and its references, ids resolved
    from the entries, then by title where `samples.title_search` allows."""
    cleaned = clean_source(folder, settings)
    return cleaned, resolve_titles(read_references(folder, cleaned.main_file), settings)
