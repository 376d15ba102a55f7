"""Find a paper's main file and inline what it inputs (DESIGN §4).

Every file is decommented before its `\\input`s are followed, so a commented-out input is
never pulled in. Inputs resolve against the main file's folder, as LaTeX does, and may not
leave the paper's folder.
"""

from __future__ import annotations

import re
from pathlib import Path

from tasks.clean._tex import normalise_newlines, strip_comments
from tasks.clean.errors import Quarantined

__all__ = ["BEGIN_DOCUMENT", "END_DOCUMENT", "Inliner", "document_body", "find_main"]

BEGIN_DOCUMENT = re.compile(r"\\begin\s*\{document\}")
END_DOCUMENT = re.compile(r"\\end\s*\{document\}")
_DOCUMENTCLASS = re.compile(r"\\document(?:class|style)\s*(?:\[[^\]]*\])?\s*\{([^}]*)\}")
_INPUT = re.compile(
    r"\\(?:(input|include|subfile)(?![a-zA-Z@])\s*\{([^{}]*)\}|input[ \t]+([^\s{}\\%#]+))"
)
_CONVENTIONAL = ("main", "ms", "paper")


def find_main(folder: Path) -> Path:
    """The file with `\\documentclass` and `\\begin{document}` (subfiles excluded); ties go to
    a conventional name (main/ms/paper/the folder's name), then the shallower, then the larger
    file: supplements, cover letters and workshop versions are usually smaller."""
    names = {*_CONVENTIONAL, folder.name.lower()}
    ranked = []
    for path in sorted(folder.rglob("*.tex")):
        if path.is_symlink() or not path.is_file():
            continue
        text = strip_comments(path.read_bytes().decode("utf-8", "replace"))[0]
        documentclass = _DOCUMENTCLASS.search(text)
        if documentclass is None or documentclass.group(1).strip() == "subfiles":
            continue
        if BEGIN_DOCUMENT.search(text) is None:
            continue
        relative = path.relative_to(folder)
        key = (path.stem.lower() not in names, len(relative.parts), -path.stat().st_size)
        ranked.append((key, relative.as_posix(), path))
    if not ranked:
        raise Quarantined(
            "no_main_file", "no .tex file has both \\documentclass and \\begin{document}"
        )
    return min(ranked)[2]


def document_body(text: str) -> str:
    """What lies between `\\begin{document}` and `\\end{document}` (all of it if neither)."""
    begin = BEGIN_DOCUMENT.search(text)
    if begin is not None:
        text = text[begin.end() :]
    end = END_DOCUMENT.search(text)
    return text if end is None else text[: end.start()]


class Inliner:
    """Reads the main file with every input inlined; collects comment bytes and warnings."""

    def __init__(self, folder: Path, main: Path) -> None:
        self._folder = folder
        self._root = folder.resolve()
        self._base = main.parent
        self.comment_bytes = 0
        self.warnings: list[str] = []

    def read(self, path: Path, stack: tuple[Path, ...] = ()) -> str:
        """`path` decommented, with its inputs inlined; `stack` holds the files being read
        (a cycle is dropped with a warning)."""
        text, removed, warnings = strip_comments(self._decode(path))
        self.comment_bytes += removed
        self.warnings.extend(f"{self._name(path)}: {w}" for w in warnings)
        if stack and BEGIN_DOCUMENT.search(text):
            text = document_body(text)
        return _INPUT.sub(lambda m: self._inline(m, (*stack, path.resolve())), text)

    def _inline(self, match: re.Match[str], stack: tuple[Path, ...]) -> str:
        written = (match.group(2) or match.group(3) or "").strip().strip('"').strip()
        if "#" in written:  # a macro parameter inside a definition, not a file
            return match.group(0)
        shown = written if Path(written).suffix else f"{written}.tex"
        target = self._resolve(written)
        if target is None:
            self.warnings.append(f"missing input: {shown}")
            return ""
        if not target.is_relative_to(self._root):
            self.warnings.append(f"input outside the archive, skipped: {shown}")
            return ""
        if target in stack:
            self.warnings.append(f"input cycle, skipped: {shown}")
            return ""
        return self.read(target, stack).strip("\n")

    def _resolve(self, written: str) -> Path | None:
        if not written:
            return None
        candidates = [written] if written.endswith(".tex") else [f"{written}.tex", written]
        for candidate in candidates:
            path = self._base / candidate
            if path.is_file():
                return path.resolve()
        return None

    def _decode(self, path: Path) -> str:
        data = path.read_bytes()
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise Quarantined(
                "not_utf8",
                f"{self._name(path)}: byte {exc.start} is not UTF-8 ({exc.reason}); "
                "re-encode the file as UTF-8",
            ) from exc
        return normalise_newlines(text.removeprefix("\ufeff"))

    def _name(self, path: Path) -> str:
        resolved = path.resolve()
        if resolved.is_relative_to(self._root):
            return resolved.relative_to(self._root).as_posix()
        return path.name
