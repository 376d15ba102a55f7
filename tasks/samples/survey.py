"""A survey's archive, read: its references (with arXiv ids and where they are cited) and its
citation groups."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, replace
from pathlib import Path

from lilo.tasks.clean.errors import Quarantined
from lilo.tasks.clean.extract import extract_archive
from lilo.tasks.clean.latex import clean_source
from lilo.tasks.config import Settings
from lilo.tasks.files import temp_dir
from lilo.tasks.records import CitationGroup, Quarantine, RawSource
from lilo.tasks.samples.citations import Citation, citation_groups, find_citations
from lilo.tasks.samples.references import Reference, read_bibliography
from lilo.tasks.samples.title_search import resolve_titles

__all__ = ["SurveyRead", "read_survey", "survey_references"]


@dataclass(frozen=True)
class SurveyRead:
    survey_id: str
    title: str
    main_file: str
    references: tuple[Reference, ...]
    groups: tuple[CitationGroup, ...]
    bibliography: tuple[str, ...] = ()  # the files the references were read from

    @property
    def paper_ids(self) -> list[str]:
        """Resolved arXiv ids, in bibliography order, without repeats."""
        return list(dict.fromkeys(r.arxiv_id for r in self.references if r.arxiv_id))


def read_survey(
    raw: RawSource, settings: Settings, previous: Mapping[str, Reference] | None = None
) -> SurveyRead | Quarantine:
    """Unpack a survey e-print in a temporary folder, resolve its bibliography and group
    the papers it cites together (docs/design.md §5). `previous` holds the references of an earlier
    read (by cite key): their title searches are reused or retried (`resolve_titles`).
    Bad input becomes a Quarantine record: a known problem under its reason (a survey whose
    bibliography cannot be found is `no_bibliography`), anything else (a parser or decode
    error) as `survey_unreadable`, so one bad survey cannot stop the fetch."""
    try:
        with _unpacked(Path(raw.path), settings) as folder:
            survey = _read(folder, settings, raw.arxiv_id, previous)
    except Quarantined as exc:
        return Quarantine(raw.arxiv_id, "survey", exc.reason, exc.detail)
    except Exception as exc:  # one survey's failure must not stop the stage
        detail = f"{type(exc).__name__}: {exc}"
        return Quarantine(raw.arxiv_id, "fetch", "survey_unreadable", detail)
    return replace(survey, title=survey.title or raw.title)


def survey_references(path: Path, settings: Settings) -> SurveyRead:
    """The survey at `path` (a source folder or an e-print archive), read. Raises
    `Quarantined` for one that cannot be read as a paper or has no readable bibliography."""
    if path.is_dir():
        return _read(path, settings, "")
    with _unpacked(path, settings) as folder:
        return _read(folder, settings, "")


@contextmanager
def _unpacked(archive: Path, settings: Settings) -> Iterator[Path]:
    with temp_dir(settings.data_dir, "survey") as tmp:
        extract_archive(archive, Path(tmp), settings.clean)
        yield Path(tmp)


def _read(
    folder: Path,
    settings: Settings,
    survey_id: str,
    previous: Mapping[str, Reference] | None = None,
) -> SurveyRead:
    """The cleaned main file (it names the bibliography), its references with ids resolved
    from the entries, then by title where `samples.title_search` allows, and where each is
    cited."""
    cleaned = clean_source(folder, settings.clean)
    bibliography = read_bibliography(folder, cleaned.main_file)
    problem = bibliography.problem(cleaned.main_file)
    if problem is not None:
        raise Quarantined("no_bibliography", problem)
    references = resolve_titles(list(bibliography.references), settings, previous)
    citations = find_citations(cleaned.text)
    key_to_id = {r.key: r.arxiv_id for r in references if r.arxiv_id}
    groups = citation_groups(citations, key_to_id, survey_id)
    return SurveyRead(
        survey_id=survey_id,
        title=cleaned.title,
        main_file=cleaned.main_file,
        references=tuple(_placed(references, citations, groups)),
        groups=tuple(groups),
        bibliography=bibliography.files,
    )


def _placed(
    references: list[Reference], citations: list[Citation], groups: list[CitationGroup]
) -> list[Reference]:
    """Each reference with the section of its first citation (outside acknowledgements when
    it has one there), its number of citations, and the most specific group holding it
    (`groups` lists command groups first, then paragraph, then subsection)."""
    first: dict[str, Citation] = {}
    for citation in citations:
        earlier = first.get(citation.key)
        if earlier is None or (earlier.back_matter and not citation.back_matter):
            first[citation.key] = citation
    counts = Counter(c.key for c in citations)
    group_of: dict[str, str] = {}
    for group in groups:
        for key in group.cite_keys:
            group_of.setdefault(key, group.group_id)
    placed = []
    for ref in references:
        cited = first.get(ref.key)
        placed.append(
            replace(
                ref,
                section=cited.section if cited else "",
                subsection=cited.subsection if cited else "",
                citation_group=group_of.get(ref.key),
                citations=counts[ref.key],
            )
        )
    return placed
