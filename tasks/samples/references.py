"""A survey's bibliography, each entry resolved to an arXiv id where the entry says which.

Only the bibliography files the main file names are read: an e-print often ships stale or
unrelated `.bib` files, and a reference the survey never used must not seed a sample
(DESIGN §5). Resolution is pure: no network; a title search is a later stage's job.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import bibtexparser
from bibtexparser.model import DuplicateBlockKeyBlock, Entry
from pylatexenc.latex2text import LatexNodes2Text

from tasks.samples.arxiv_ids import ARXIV_ID, find_arxiv_id, normalize_arxiv_id

__all__ = ["Reference", "read_references"]

log = logging.getLogger(__name__)

_COMMENT = re.compile(r"(?<!\\)%.*")
_BIBLIOGRAPHY = re.compile(r"\\bibliography\s*\{([^}]*)\}")
_ADDBIBRESOURCE = re.compile(r"\\addbibresource\s*(?:\[[^\]]*\])?\s*\{([^}]*)\}")
_BIBITEM = re.compile(r"\\bibitem\s*(?:\[[^\]]*\])?\s*\{([^}]*)\}")
_BBL_END = re.compile(r"\\end\{thebibliography\}")
_ENTRY_KEY = re.compile(r"@\w+\s*[{(]\s*([^,\s]+)")
_DOI = re.compile(rf"^(?:https?://(?:dx\.)?doi\.org/)?10\.48550/arxiv\.({ARXIV_ID})$", re.I)
_ARXIV_URL = re.compile(rf"arxiv\.org/(?:abs|pdf)/({ARXIV_ID})", re.I)
_S2_VOLUME = re.compile(rf"^abs/({ARXIV_ID})$", re.I)
_TO_TEXT = LatexNodes2Text()  # titles as text: `\\ensuremath{\\gamma}-Ray` -> `γ-Ray`


@dataclass(frozen=True)
class Reference:
    """One bibliography entry. `how` says which rule found the id (`unresolved` if none;
    `parse_error` / `duplicate` for entries BibTeX itself would reject or ignore)."""

    key: str
    title: str
    arxiv_id: str | None
    how: str


def read_references(folder: Path, main_file: str) -> list[Reference]:
    """The references of the survey whose main file is `folder/main_file`, in file order.

    `.bib` files come from `\\bibliography{a,b}` or biblatex `\\addbibresource{x.bib}`; if none
    is there, a `.bbl` (the compiled bibliography arXiv sometimes ships instead) is scanned.
    """
    main = (folder / main_file).read_text(encoding="utf-8", errors="replace")
    bib_files = _bib_files(folder, _COMMENT.sub("", main))
    if bib_files:
        return [ref for path in bib_files for ref in _parse_bib(path)]
    bbl = _bbl_file(folder, main_file)
    return _parse_bbl(bbl) if bbl else []


def _inside(folder: Path, name: str) -> Path | None:
    """`folder/name` if it exists and stays inside the folder (archives are untrusted)."""
    root = folder.resolve()
    path = (root / name).resolve()
    return path if path.is_relative_to(root) and path.is_file() else None


def _bib_files(folder: Path, main: str) -> list[Path]:
    names = [n for m in _BIBLIOGRAPHY.finditer(main) for n in m.group(1).split(",")]
    names += [m.group(1) for m in _ADDBIBRESOURCE.finditer(main)]
    paths: list[Path] = []
    for name in (n.strip() for n in names):
        if not name:
            continue
        path = _inside(folder, name if name.endswith(".bib") else f"{name}.bib")
        if path is None:
            log.warning("bibliography %s is named in the main file but not in %s", name, folder)
        elif path not in paths:
            paths.append(path)
    return paths


def _bbl_file(folder: Path, main_file: str) -> Path | None:
    own = _inside(folder, str(Path(main_file).with_suffix(".bbl")))
    return own or next(iter(sorted(folder.glob("*.bbl"))), None)


def _parse_bib(path: Path) -> list[Reference]:
    library = bibtexparser.parse_string(path.read_text(encoding="utf-8", errors="replace"))
    blocks = sorted([*library.entries, *library.failed_blocks], key=lambda b: b.start_line or 0)
    references: list[Reference] = []
    for block in blocks:
        if isinstance(block, Entry):
            references.append(_resolve(block))
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


def _resolve(entry: Entry) -> Reference:
    fields = {k.lower(): str(f.value).strip() for k, f in entry.fields_dict.items()}
    title = " ".join(_TO_TEXT.latex_to_text(fields.get("title", "")).split())
    for how, rule in _RULES:
        arxiv_id = rule(fields)
        if arxiv_id:
            return Reference(key=entry.key, title=title, arxiv_id=arxiv_id, how=how)
    return Reference(key=entry.key, title=title, arxiv_id=None, how="unresolved")


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


def _parse_bbl(path: Path) -> list[Reference]:
    """`\\bibitem{key} ...` up to the next item: the id is taken where the text marks one."""
    text = _BBL_END.split(path.read_text(encoding="utf-8", errors="replace"))[0]
    items = list(_BIBITEM.finditer(text))
    references: list[Reference] = []
    for item, following in zip(items, [*items[1:], None], strict=True):
        body = text[item.end() : following.start() if following else len(text)]
        arxiv_id = find_arxiv_id(body)
        how = "bbl" if arxiv_id else "unresolved"
        references.append(
            Reference(key=item.group(1).strip(), title="", arxiv_id=arxiv_id, how=how)
        )
    return references
