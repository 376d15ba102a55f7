"""Cleaning: raw e-print -> cleaned paper text, or a quarantine record (docs/design.md §3-4)."""

from __future__ import annotations

import hashlib
import re
import shutil
from collections.abc import Callable
from pathlib import Path

from lilo.tasks.clean._inputs import inlined_source
from lilo.tasks.clean.errors import Quarantined
from lilo.tasks.clean.extract import extract_archive
from lilo.tasks.clean.front import FrontMatter
from lilo.tasks.clean.latex import CLEANER_VERSION, Cleaned, clean_source
from lilo.tasks.clean.plain import latex_to_text
from lilo.tasks.config import CleanSettings
from lilo.tasks.records import PaperText, Quarantine, RawSource
from lilo.tasks.text import count_words
from lilo.tasks.tokens import count_word_tokens

__all__ = [
    "CLEANER_VERSION",
    "Cleaned",
    "FrontMatter",
    "Quarantined",
    "clean_folder",
    "clean_paper",
    "clean_source",
    "extract_archive",
    "inlined_source",
    "latex_to_text",
]

_UNSAFE_NAME = re.compile(r"[^A-Za-z0-9._-]")


def clean_paper(raw: RawSource, work_dir: Path, limits: CleanSettings) -> PaperText | Quarantine:
    """Unpack `raw` into `work_dir/<id>/` and clean it. Never raises: whatever goes wrong
    with one paper becomes its Quarantine record, so one bad archive cannot stop a batch.

    The unpacked folder is left in place for inspection and replaced on the next run.
    """
    folder = work_dir / _folder_name(raw.arxiv_id)

    def unpack() -> None:
        if folder.exists():
            shutil.rmtree(folder)
        extract_archive(Path(raw.path), folder, limits)

    failed = _guarded(raw, unpack)
    return failed if failed is not None else clean_folder(folder, raw, limits)


def clean_folder(folder: Path, raw: RawSource, limits: CleanSettings) -> PaperText | Quarantine:
    """Clean a source folder in place (nothing is written); `raw` says where it came from.
    Never raises, like `clean_paper`."""
    found: list[Cleaned] = []
    failed = _guarded(raw, lambda: found.append(clean_source(folder, limits)))
    if failed is not None:
        return failed
    cleaned = found[0]
    words = count_words(cleaned.text)
    if words < limits.min_words:
        detail = f"{words} words < {limits.min_words}"
        return Quarantine(raw.arxiv_id, stage="clean", reason="too_short", detail=detail)
    if words > limits.max_words:
        detail = f"{words} words > {limits.max_words} (clean.max_words)"
        return Quarantine(raw.arxiv_id, stage="clean", reason="too_long", detail=detail)
    return PaperText(
        paper_id=raw.arxiv_id,
        title=cleaned.title or raw.title,
        text=cleaned.text,
        words=words,
        tokens=count_word_tokens(cleaned.text),
        main_file=cleaned.main_file,
        cleaner_version=CLEANER_VERSION,
        source_sha256=raw.sha256,
        content_sha256=hashlib.sha256(cleaned.text.encode("utf-8")).hexdigest(),
        categories=raw.categories,
        removed=dict(cleaned.removed),
        warnings=cleaned.warnings,
    )


def _guarded(raw: RawSource, step: Callable[[], object]) -> Quarantine | None:
    """Run `step`; what it raises becomes the paper's Quarantine record."""
    try:
        step()
    except Quarantined as exc:
        return Quarantine(raw.arxiv_id, stage="clean", reason=exc.reason, detail=exc.detail)
    except Exception as exc:  # one paper's failure must not stop the batch
        detail = f"{type(exc).__name__}: {exc}"
        return Quarantine(raw.arxiv_id, stage="clean", reason="clean_error", detail=detail)
    return None


def _folder_name(arxiv_id: str) -> str:
    """Old-style ids hold a slash (`astro-ph/9911436`): one flat, safe folder per paper."""
    return _UNSAFE_NAME.sub("_", arxiv_id).lstrip(".") or "paper"
