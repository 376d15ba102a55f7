"""A survey's bibliography, each entry resolved to an arXiv id where the entry says which.

Only the bibliography the main document uses is read (`bib_sources`): an e-print often ships
stale or unrelated `.bib` files, and a reference the survey never used must not seed a sample
(docs/design.md §5). The `.bib` files are read when they are all there; else the compiled
`.bbl`, or a
`thebibliography` written into the source. Resolution is pure: no network; a title search is
a later stage's job (`title_search`).
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

import bibtexparser
from bibtexparser.model import DuplicateBlockKeyBlock, Entry

from lilo.tasks.arxiv_ids import ARXIV_ID, find_arxiv_id, normalize_arxiv_id
from lilo.tasks.clean import latex_to_text
from lilo.tasks.config import CleanSettings
from lilo.tasks.files import FileTooLarge, read_bounded
from lilo.tasks.samples.bbl import BblEntry, parse_bbl
from lilo.tasks.samples.bib_sources import BibSources, find_bib_sources

__all__ = ["Bibliography", "Reference", "read_bibliography", "read_references"]

log = logging.getLogger(__name__)

# A .bib or .bbl past this is not a bibliography: the size bound of a paper's LaTeX.
_MAX_BYTES = CleanSettings().max_text_chars

_ENTRY_KEY = re.compile(r"@\w+\s*[{(]\s*([^,\s]+)")
_DOI = re.compile(rf"^(?:https?://(?:dx\.)?doi\.org/)?10\.48550/arxiv\.({ARXIV_ID})$", re.I)
_ARXIV_URL = re.compile(rf"arxiv\.org/(?:abs|pdf)/({ARXIV_ID})", re.I)
_S2_VOLUME = re.compile(rf"^abs/({ARXIV_ID})$", re.I)
_S2_TEXT = re.compile(rf"\barxiv\W{{0,4}}abs/({ARXIV_ID})", re.I)  # plainnat: ArXiv, abs/2106...
_AUTHOR_SEPARATOR = re.compile(r"\s+and\s+", re.I)
_VENUE_FIELDS = ("journal", "journaltitle", "booktitle", "publisher", "institution", "school")


@dataclass(frozen=True)
class Reference:
    """One bibliography entry. `how` says which rule found the id (`unresolved` if none;
    `parse_error` / `duplicate` for entries BibTeX itself would reject or ignore; `bbl` for
    an id read from a compiled bibliography). Where the survey cites it and the record of
    its title searches are filled in by the survey reader and `title_search`."""

    key: str
    title: str
    arxiv_id: str | None
    how: str
    authors: tuple[str, ...] = ()
    year: str = ""
    venue: str = ""
    doi: str = ""
    url: str = ""
    section: str = ""  # of its first citation
    subsection: str = ""
    citation_group: str | None = None  # the most specific co-citation group holding it
    citations: int = 0
    title_searches: int = 0  # failed searches in a row; 0 once one got an answer
    title_searched_at: datetime | None = None
    title_search_error: str | None = None


@dataclass(frozen=True)
class Bibliography:
    references: tuple[Reference, ...]
    files: tuple[str, ...]  # what was read, relative to the folder
    sources: BibSources

    def problem(self, main_file: str) -> str | None:
        """Why no entry was read, naming what was looked for; None when entries were read."""
        if self.references:
            return None
        stem = Path(main_file).with_suffix(".bbl").name
        if self.files:
            return f"{', '.join(self.files)}: no entry could be read"
        if self.sources.missing:
            return (
                f"{main_file} names {', '.join(self.sources.missing)}, which the source does "
                f"not include, and there is no {stem}: add the .bib files or the compiled .bbl"
            )
        return (
            f"{main_file} (with its inputs) names no bibliography (\\bibliography, "
            f"\\addbibresource, \\nobibliography), and there is no {stem} or "
            "thebibliography to read instead"
        )


def read_references(folder: Path, main_file: str) -> list[Reference]:
    """The references of the survey whose main file is `folder/main_file`, in file order."""
    return list(read_bibliography(folder, main_file).references)


def read_bibliography(folder: Path, main_file: str) -> Bibliography:
    """The survey's references with what they were read from."""
    sources = find_bib_sources(folder, main_file)
    root = folder.resolve()
    if sources.bib_files and not sources.missing:
        references = [ref for path in sources.bib_files for ref in _parse_bib(path)]
        if references:
            return Bibliography(tuple(references), _names(sources.bib_files, root), sources)
    if sources.bbl is not None and (text := _read_text(sources.bbl)):
        if references := [_from_bbl(entry) for entry in parse_bbl(text)]:
            return Bibliography(tuple(references), _names([sources.bbl], root), sources)
    if sources.embedded:
        references = [_from_bbl(entry) for entry in parse_bbl(sources.embedded)]
        return Bibliography(tuple(references), (f"{main_file} (thebibliography)",), sources)
    for name in sources.missing:
        log.warning("bibliography %s is named in %s but not in %s", name, main_file, folder)
    references = [ref for path in sources.bib_files for ref in _parse_bib(path)]
    return Bibliography(tuple(references), _names(sources.bib_files, root), sources)


def _names(paths: list[Path] | tuple[Path, ...], root: Path) -> tuple[str, ...]:
    return tuple(p.relative_to(root).as_posix() for p in paths)


def _read_text(path: Path) -> str:
    """The file's text; "" with a warning naming it when it is past the size limit."""
    try:
        data = read_bounded(path, _MAX_BYTES)
    except FileTooLarge as exc:
        log.warning("%s: skipped", exc)
        return ""
    return data.decode("utf-8", errors="replace")


def _parse_bib(path: Path) -> list[Reference]:
    library = bibtexparser.parse_string(_read_text(path))
    blocks = sorted([*library.entries, *library.failed_blocks], key=lambda b: b.start_line or 0)
    references: list[Reference] = []
    for block in blocks:
        if isinstance(block, Entry):
            references.append(_from_bib(block))
        else:
            key = getattr(block, "key", None) or _raw_key(block.raw or "")
            how = "duplicate" if isinstance(block, DuplicateBlockKeyBlock) else "parse_error"
            log.warning(
                "%s: entry %s at line %s skipped (%s)", path.name, key, block.start_line, how
            )
            references.append(Reference(key=key, title="", arxiv_id=None, how=how))
    return references


def _raw_key(raw: str) -> str:
    match = _ENTRY_KEY.search(raw)
    return match.group(1) if match else ""


def _from_bib(entry: Entry) -> Reference:
    fields = {k.lower(): str(f.value).strip() for k, f in entry.fields_dict.items()}
    authors = _AUTHOR_SEPARATOR.split(fields["author"]) if fields.get("author") else []
    venue = next((fields[f] for f in _VENUE_FIELDS if fields.get(f)), "")
    arxiv_id, how = _resolve(fields)
    return Reference(
        key=entry.key,
        title=latex_to_text(fields.get("title", "")),
        arxiv_id=arxiv_id,
        how=how,
        authors=tuple(latex_to_text(a) for a in authors),
        year=fields.get("year", "") or fields.get("date", "")[:4],
        venue=latex_to_text(venue),
        doi=fields.get("doi", ""),
        url=fields.get("url", ""),
    )


def _from_bbl(entry: BblEntry) -> Reference:
    """A compiled entry: the `.bib` rules on the fields it kept, then any arXiv mention in
    its text; an id found either way is `bbl`."""
    fields = {
        "eprint": entry.eprint,
        "eprinttype": entry.eprinttype,
        "doi": entry.doi,
        "url": entry.url,
        "journal": entry.venue,
        "note": entry.text,
    }
    arxiv_id = _resolve(fields)[0]
    if arxiv_id is None and (s2 := _S2_TEXT.search(entry.text)) is not None:
        arxiv_id = normalize_arxiv_id(s2.group(1))
    return Reference(
        key=entry.key,
        title=entry.title,
        arxiv_id=arxiv_id,
        how="bbl" if arxiv_id else "unresolved",
        authors=entry.authors,
        year=entry.year,
        venue=entry.venue,
        doi=entry.doi,
        url=entry.url,
    )


def _resolve(fields: dict[str, str]) -> tuple[str | None, str]:
    for how, rule in _RULES:
        arxiv_id = rule(fields)
        if arxiv_id:
            return arxiv_id, how
    return None, "unresolved"


def _by_eprint(fields: dict[str, str]) -> str | None:
    """`eprint` counts when the archive is arXiv, or is not named and the value is an arXiv id."""
    archive = (fields.get("archiveprefix") or fields.get("eprinttype") or "arxiv").lower()
    return normalize_arxiv_id(fields.get("eprint", "")) if archive == "arxiv" else None


def _by_doi(fields: dict[str, str]) -> str | None:
    match = _DOI.match(fields.get("doi", ""))
    return normalize_arxiv_id(match.group(1)) if match else None


def _by_journal(fields: dict[str, str]) -> str | None:
    for name in ("journal", "note", "howpublished"):
        found = find_arxiv_id(fields.get(name, ""))
        if found:
            return found
    return None


def _by_url(fields: dict[str, str]) -> str | None:
    for name in ("url", "eprint", "howpublished", "note"):
        match = _ARXIV_URL.search(fields.get(name, ""))
        if match:
            return normalize_arxiv_id(match.group(1))
    return None


def _by_semantic_scholar(fields: dict[str, str]) -> str | None:
    """Semantic Scholar exports write `journal = {ArXiv}, volume = {abs/2102.00007}`."""
    if fields.get("journal", "").lower() != "arxiv":
        return None
    match = _S2_VOLUME.match(fields.get("volume", ""))
    return normalize_arxiv_id(match.group(1)) if match else None


_RULES: tuple[tuple[str, Callable[[dict[str, str]], str | None]], ...] = (
    ("eprint", _by_eprint),
    ("doi", _by_doi),
    ("journal", _by_journal),
    ("url", _by_url),
    ("semantic_scholar", _by_semantic_scholar),
)
