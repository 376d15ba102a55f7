"""Reading a published benchmark's files: where its `dataset/` folder is, JSON that may be
malformed, papers that may not be UTF-8, files that link out of the clone, and each problem
as one line naming the file."""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from pylatexenc.latex2text import LatexNodes2Text

from lilo.tasks.errors import InputError
from lilo.tasks.files import FileTooLarge, HardLinked, LinkOutside, read_bounded
from lilo.tasks.records import PaperText, Quarantine
from lilo.tasks.text import count_words
from lilo.tasks.tokens import count_word_tokens

__all__ = [
    "MAX_JSON_BYTES",
    "MAX_PAPER_BYTES",
    "MAX_PROMPT_BYTES",
    "STAGE",
    "BenchmarkError",
    "Files",
    "header_stripped",
    "locate_dataset",
    "paper_id_of",
    "problem",
    "title_of",
]

STAGE = "import"
PAPERS_DIR = "papers/cleaned"

# Size limits per kind of file, far above the published benchmark's (papers under 1 MB,
# datasetDescription.json 0.5 MB, a template a few KB): a bigger file is not one of them.
MAX_PAPER_BYTES = 20_000_000
MAX_JSON_BYTES = 100_000_000
MAX_PROMPT_BYTES = 1_000_000

_TITLE_RE = re.compile(r"\\title\s*(?:\[[^\]]*\])?\s*\{")
_BEGIN_DOCUMENT_RE = re.compile(r"\\begin\s*\{document\}")
_PAPER_FILE_RE = re.compile(r"^arXiv-(?P<id>.+)\.tex$")
_NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*$")
_REASONS: dict[type[FileTooLarge], str] = {LinkOutside: "link_outside", HardLinked: "hard_link"}


class BenchmarkError(InputError):
    """The benchmark cannot be read at all (a missing folder); the message says what to give."""


def problem(item: str, reason: str, message: str) -> Quarantine:
    """A problem with the input: a quarantine row whose detail is the one-line message."""
    return Quarantine(item, STAGE, reason, message)


def locate_dataset(path: Path, name: str) -> Path:
    """The `dataset/` folder of a clone, given the clone or that folder itself; `name` is
    the dataset version it becomes (it starts every sample id)."""
    if not _NAME_RE.match(name):
        raise BenchmarkError(
            f"dataset name {name!r}: use letters, digits, '.', '_' and '-' (e.g. longinoutbench)"
        )
    if not path.is_dir():
        raise BenchmarkError(
            f"{path} is not a folder: give your clone of the benchmark (or its dataset/ folder)"
        )
    for root in (path / "dataset", path):
        if (root / PAPERS_DIR).is_dir():
            return root
    raise BenchmarkError(
        f"{path / 'dataset' / PAPERS_DIR} not found: give the clone's root or its dataset/ folder"
    )


@dataclass(frozen=True)
class Files:
    """A benchmark's dataset folder; paths in messages are relative to the PATH given. Every
    file is read through `read`, only where it resolves inside PATH, the folder the user
    named (never its parent), and has one name unless `hard_links`."""

    given: Path
    root: Path
    name: str
    hard_links: bool = False

    @property
    def clone(self) -> Path:
        """The clone's root, where its scripts are: PATH, or its parent's `dataset/` folder's
        parent when PATH is the clone (never above PATH)."""
        return self.root.parent if self.root != self.given else self.given

    def shown(self, rel: str) -> str:
        """`rel` (relative to the dataset folder) as the user sees it: relative to PATH."""
        return (self.root / rel).relative_to(self.given).as_posix()

    def item(self, rel: str) -> str:
        """A quarantine item id for a file: keyed by the dataset's name, not by PATH."""
        return f"{self.name}/{rel}"

    def read(self, rel: str, limit: int, problems: list[Quarantine]) -> bytes | None:
        """The file's bytes, or None with a `too_large` problem when it is past `limit` or
        not a regular file, a `link_outside` one when it links out of PATH, a `hard_link` one
        when it has more names (missing files: the caller)."""
        return self.read_at(self.root / rel, self.item(rel), self.shown(rel), limit, problems)

    def read_at(
        self, path: Path, item: str, shown: str, limit: int, problems: list[Quarantine]
    ) -> bytes | None:
        """`read` for any file of PATH (`shown` as the user sees it, `item` its id)."""
        try:
            return read_bounded(path, limit, within=self.given, hard_links=self.hard_links)
        except FileTooLarge as exc:
            why = str(exc).rpartition(": ")[2]
            reason = _REASONS.get(type(exc), "too_large")
            problems.append(problem(item, reason, f"{shown}: {why}: file skipped"))
            return None

    def read_json(self, rel: str, problems: list[Quarantine]) -> Any | None:
        """Parsed JSON, or None with a `malformed_json` or `too_large` problem (missing
        files: the caller)."""
        found = self.read_json_text(rel, problems)
        return None if found is None else found[0]

    def read_json_text(self, rel: str, problems: list[Quarantine]) -> tuple[Any, str] | None:
        """`read_json`'s value with the file's text."""
        data = self.read(rel, MAX_JSON_BYTES, problems)
        if data is None:
            return None
        try:
            text = data.decode("utf-8")
            return json.loads(text), text
        except (UnicodeDecodeError, json.JSONDecodeError, RecursionError) as exc:
            why = "nested too deeply" if isinstance(exc, RecursionError) else exc
            problems.append(
                problem(
                    self.item(rel),
                    "malformed_json",
                    f"{self.shown(rel)}: malformed JSON ({why}): file skipped",
                )
            )
            return None

    def read_paper(self, rel: str, problems: list[Quarantine]) -> PaperText | None:
        """A paper stored as is (already cleaned LaTeX), or None with a `not_utf8` or
        `too_large` problem."""
        paper_id = paper_id_of(Path(rel).name)
        data = self.read(rel, MAX_PAPER_BYTES, problems)
        if data is None:
            return None
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError as exc:
            problems.append(
                problem(
                    paper_id,
                    "not_utf8",
                    f"{self.shown(rel)}: not UTF-8 (byte {exc.start}): paper quarantined",
                )
            )
            return None
        sha = hashlib.sha256(data).hexdigest()
        return PaperText(
            paper_id=paper_id,
            title=title_of(text),
            text=text,
            words=count_words(text),
            tokens=count_word_tokens(text),
            main_file=self.shown(rel),
            cleaner_version=f"import:{self.name}",
            source_sha256=sha,
            content_sha256=sha,
        )


def paper_id_of(file_name: str) -> str:
    """`arXiv-2305.18290v3.tex` -> `2305.18290v3` (other names: the stem)."""
    match = _PAPER_FILE_RE.match(file_name)
    return match.group("id") if match else Path(file_name).stem


def title_of(text: str) -> str:
    """The first `\\title{...}` as plain text ("" if none)."""
    match = _TITLE_RE.search(text)
    if match is None:
        return ""
    depth, start = 1, match.end()
    i = start
    while i < len(text):
        if text[i] == "\\":  # an escaped character (`\\{`, `\\\\`) is never a brace
            i += 2
            continue
        depth += {"{": 1, "}": -1}.get(text[i], 0)
        if depth == 0:
            plain = LatexNodes2Text().latex_to_text(text[start:i])
            return " ".join(plain.split())
        i += 1
    return ""


def header_stripped(paper: PaperText) -> PaperText:
    """The paper as the cleaned-papers suite should see it: the published files open with
    `\\title{...}` then `\\begin{document}` (the benchmark's format, kept in the stored text),
    which lilo's cleaner would have removed. Only that leading header is cut; a second
    `\\begin{document}` or any other leftover still fails the suite."""
    match = _BEGIN_DOCUMENT_RE.search(paper.text)
    if match is None or not paper.text[: match.start()].lstrip().startswith("\\title"):
        return paper
    body = paper.text[match.end() :]
    return replace(paper, text=body)
