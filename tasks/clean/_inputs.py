"""Find a paper's main file and inline what it inputs (docs/design.md §4).

Every file is decommented before its `\\input`s are followed, so a commented-out input is
never pulled in. Inputs resolve against the main file's folder, as LaTeX does, and may not
leave the paper's folder. Besides `\\input`, `\\include` and `\\subfile`, the import
package's `\\import{dir/}{file}` and `\\subimport{dir/}{file}` are followed (inside the
imported file, inputs resolve against its own folder, as the package makes them), a
one-argument command defined as an input (showyourwork's `\\variable{output/x.txt}`) too,
and local packages are scanned for inputs a build tool was meant to supply; their text is
kept for the macro definitions they hold.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

from lilo.tasks.clean._comments import remove_environments, strip_comments
from lilo.tasks.clean._tex import decode_tex
from lilo.tasks.clean.errors import Quarantined
from lilo.tasks.config import CleanSettings
from lilo.tasks.files import FileTooLarge, read_bounded

__all__ = [
    "BEGIN_DOCUMENT",
    "END_DOCUMENT",
    "Inliner",
    "document_body",
    "find_main",
    "inlined_source",
]

BEGIN_DOCUMENT = re.compile(r"\\begin\s*\{document\}")
END_DOCUMENT = re.compile(r"\\end\s*\{document\}")
# `[^][]` and `[^{}]`: an unclosed one must not make every later one scan to the end.
_DOCUMENTCLASS = re.compile(r"\\document(?:class|style)\s*(?:\[[^\][]*\])?\s*\{([^{}]*)\}")
_INPUT_COMMANDS = ("input", "include", "subfile")
# `\newcommand\variable[1]{\input{##1}}`: a wrapper whose uses are inputs too.
_WRAPPER = re.compile(
    r"\\(?:re|provide)?newcommand\*?\s*\{?\\([A-Za-z@]+)\}?\s*\[1\]\s*"
    r"\{\s*\\(?:input|include|subfile)\s*\{#+1\}\s*\}"
)
# The comment package: `\\excludecomment{notes}` makes `notes` a comment environment.
_EXCLUDECOMMENT = re.compile(r"\\excludecomment\s*\{([^{}]+)\}")
_USEPACKAGE = re.compile(r"\\(?:usepackage|RequirePackage)\s*(?:\[[^\][]*\])?\s*\{([^{}]*)\}")
_PACKAGE_NAME = re.compile(r"[\w.-]{1,100}")
_CONVENTIONAL = ("main", "ms", "paper")
# Second documents that authors keep beside the paper.
_SECONDARY = re.compile(
    r"supp|cover|letter|response|rebuttal|reply|poster|slides|talk|workshop", re.I
)
# NUL is never TeX: a file holding it is UTF-16 without a byte-order mark, or binary.
_NOT_TEXT = (
    "NUL bytes: not text in UTF-8 or an 8-bit encoding (UTF-16 without a byte-order mark?); "
    "re-save it as UTF-8"
)
# arXiv's own record of the top-level file: 00README.json (current) or 00README.XXD (legacy).
_README_XXD = re.compile(r"^\s*(\S+\.tex)\s+toplevelfile\b", re.M)


def find_main(folder: Path, limit: int) -> Path:
    """arXiv's `00README` choice when there is one; else the file with `\\documentclass` and
    `\\begin{document}` (subfiles excluded). Ties go to a conventional name (main/ms/paper/the
    folder's name), then away from supplement/cover-letter/workshop names, then to the
    shallower, then the larger file. A .tex file over `limit` bytes is `too_large`."""
    if (chosen := _readme_toplevel(folder)) is not None:
        return chosen
    names = {*_CONVENTIONAL, folder.name.lower()}
    ranked = []
    not_text = []
    for path in sorted(folder.rglob("*.tex")):
        if path.is_symlink() or not path.is_file():
            continue
        text = decode_tex(_read(path, folder, limit))[0]
        if "\x00" in text:
            not_text.append(path.relative_to(folder).as_posix())
            continue
        if "\\document" not in text:  # a cheap test first: most files are not documents
            continue
        begins = list(BEGIN_DOCUMENT.finditer(text))
        if not begins:
            continue
        # Only the part up to the last `\begin{document}` can hold what is checked here.
        text = strip_comments(text[: begins[-1].end()])[0]
        documentclass = _DOCUMENTCLASS.search(text)
        if documentclass is None or documentclass.group(1).strip() == "subfiles":
            continue
        if BEGIN_DOCUMENT.search(text) is None:
            continue
        relative = path.relative_to(folder)
        key = (
            path.stem.lower() not in names,
            _SECONDARY.search(relative.as_posix()) is not None,
            len(relative.parts),
            -path.stat().st_size,
        )
        ranked.append((key, relative.as_posix(), path))
    if not ranked and not_text:
        raise Quarantined("not_utf8", f"{not_text[0]}: {_NOT_TEXT}")
    if not ranked:
        raise Quarantined(
            "no_main_file", "no .tex file has both \\documentclass and \\begin{document}"
        )
    return min(ranked)[2]


def _readme_toplevel(folder: Path) -> Path | None:
    """The top-level file named by arXiv's 00README.json or 00README.XXD, if it exists."""
    names: list[str] = []
    json_file, xxd_file = folder / "00README.json", folder / "00README.XXD"
    if json_file.is_file() and not json_file.is_symlink():
        try:
            sources = json.loads(json_file.read_bytes()).get("sources", [])
            names = [s["filename"] for s in sources if s.get("usage") == "toplevel"]
        except (ValueError, AttributeError, TypeError, KeyError):
            names = []
    elif xxd_file.is_file() and not xxd_file.is_symlink():
        names = _README_XXD.findall(decode_tex(xxd_file.read_bytes())[0])
    root = folder.resolve()
    for name in names:
        path = (folder / str(name)).resolve()
        if path.is_relative_to(root) and path.is_file():
            return folder / path.relative_to(root)
    return None


def document_body(text: str) -> str:
    """What lies between `\\begin{document}` and `\\end{document}` (all of it if neither)."""
    begin = BEGIN_DOCUMENT.search(text)
    if begin is not None:
        text = text[begin.end() :]
    end = END_DOCUMENT.search(text)
    return text if end is None else text[: end.start()]


class Inliner:
    """Reads the main file with every input inlined; collects comment bytes and warnings.

    Inlining is bounded, so that inputs that include each other twice over (2^N copies from
    N small files) cannot hang a run: at most `max_files` inputs are read and at most
    `max_text_chars` of their text, else the paper is quarantined (`too_large`). Each file is
    read and decommented once, however often it is input."""

    def __init__(self, folder: Path, main: Path, limits: CleanSettings | None = None) -> None:
        self._limits = limits or CleanSettings()
        self._inputs = 0
        self._bytes = 0
        self._files: dict[Path, tuple[str, int, list[str]]] = {}
        self._folder = folder
        self._root = folder.resolve()
        self._base = main.parent
        self._input = _input_pattern(_INPUT_COMMANDS)
        self.comment_bytes = 0
        self.warnings: list[str] = []
        self.packages: list[str] = []  # the local packages' text, decommented

    def read(self, path: Path, stack: tuple[Path, ...] = (), base: Path | None = None) -> str:
        """`path` decommented, with its inputs inlined; `stack` holds the files being read
        (a cycle is dropped with a warning), `base` the folder its inputs resolve against."""
        text, removed, warnings = self._decommented(path)
        self.comment_bytes += removed
        self.warnings.extend(f"{self._name(path)}: {w}" for w in warnings)
        if not stack:
            self._scan_preamble(text)
        elif BEGIN_DOCUMENT.search(text):
            text = document_body(text)
        inner = (*stack, path.resolve())
        text = self._input.sub(lambda m: self._inline(m, inner, base or self._base), text)
        if not stack and "excludecomment" in text:
            text = remove_environments(text, tuple(_EXCLUDECOMMENT.findall(text)))
        return text

    def _decommented(self, path: Path) -> tuple[str, int, list[str]]:
        """`strip_comments` of the file, counted against the limits."""
        if path not in self._files:
            self._files[path] = strip_comments(self._decode(path))
        text = self._files[path][0]
        self._inputs += 1
        self._bytes += len(text)
        limits = self._limits
        if self._inputs > limits.max_files:
            raise Quarantined(
                "too_large",
                f"{self._name(path)}: more than {limits.max_files} inputs read (clean.max_files):"
                " files that input each other more than once?",
            )
        if self._bytes > limits.max_text_chars:
            raise Quarantined(
                "too_large",
                f"{self._name(path)}: inputs inline to more than {limits.max_text_chars} "
                "characters (clean.max_text_chars)",
            )
        return self._files[path]

    def _scan_preamble(self, main: str) -> None:
        """Input wrappers defined by the main file or its local packages become input
        commands; a package's own missing inputs become warnings."""
        wrappers = set(_WRAPPER.findall(main))
        for package in self._local_packages(main):
            text = strip_comments(self._decode(package, warn=False))[0]
            self.packages.append(text)
            wrappers.update(_WRAPPER.findall(text))
            for match in self._input.finditer(text):
                self._check_package_input(match, package)
        self._input = _input_pattern((*_INPUT_COMMANDS, *sorted(wrappers)))

    def _inline(self, match: re.Match[str], stack: tuple[Path, ...], base: Path) -> str:
        written = _written(match)
        if "#" in written:  # a macro parameter inside a definition, not a file
            return match.group(0)
        if match.group(5) is not None:  # \import{dir}{file}: from the main folder; \subimport: here
            base = (base if match.group(4) else self._base) / match.group(5).strip()
        shown = written if Path(written).suffix else f"{written}.tex"
        if not self._inside(written, base):
            self.warnings.append(f"input outside the archive, skipped: {shown}")
            return ""
        target = self._resolve(written, base)
        if target is None:
            self.warnings.append(f"missing input: {shown}")
            return ""
        if not target.is_relative_to(self._root):  # a link in a folder given to `lilo clean`
            self.warnings.append(f"input outside the archive, skipped: {shown}")
            return ""
        if target in stack:
            self.warnings.append(f"input cycle, skipped: {shown}")
            return ""
        return self.read(target, stack, base).strip("\n")

    def _local_packages(self, preamble: str) -> list[Path]:
        """`\\usepackage{x}` where `x.sty` ships with the paper."""
        found = []
        for match in _USEPACKAGE.finditer(preamble):
            for name in match.group(1).split(","):
                if not _PACKAGE_NAME.fullmatch(name.strip()):
                    continue
                path = self._base / f"{name.strip()}.sty"
                if path.is_file() and path.resolve().is_relative_to(self._root):
                    found.append(path)
        return found

    def _check_package_input(self, match: re.Match[str], package: Path) -> None:
        """A package's inputs stay in the preamble (never inlined); a missing one is what a
        build tool would have made (showyourwork.tex): a warning, like any missing input."""
        written = _written(match)
        if not written or "#" in written or not self._inside(written, self._base):
            return
        if self._resolve(written) is None:
            shown = written if Path(written).suffix else f"{written}.tex"
            self.warnings.append(f"missing input: {shown} (from {package.name})")

    def _inside(self, written: str, base: Path) -> bool:
        """Whether `written`, read from `base`, names a path in the paper's folder: decided
        from the path alone, before the file system is asked, so that no warning tells an
        archive whether a host file exists."""
        path = os.path.normpath(os.path.join(os.path.abspath(base), written))
        return Path(path).is_relative_to(os.path.abspath(self._folder))

    def _resolve(self, written: str, base: Path | None = None) -> Path | None:
        if not written:
            return None
        candidates = [written] if written.endswith(".tex") else [f"{written}.tex", written]
        for candidate in candidates:
            path = (base or self._base) / candidate
            if path.is_file():
                return path.resolve()
        return None

    def _decode(self, path: Path, warn: bool = True) -> str:
        text, encoding = decode_tex(_read(path, self._folder, self._limits.max_text_chars))
        if "\x00" in text:
            raise Quarantined("not_utf8", f"{self._name(path)}: {_NOT_TEXT}")
        if warn and encoding not in {"utf-8", "utf-8-sig"}:
            self.warnings.append(f"{self._name(path)}: not UTF-8, decoded as {encoding}")
        return text

    def _name(self, path: Path) -> str:
        resolved = path.resolve()
        if resolved.is_relative_to(self._root):
            return resolved.relative_to(self._root).as_posix()
        return path.name


def _read(path: Path, folder: Path, limit: int) -> bytes:
    try:
        return read_bounded(path, limit)
    except FileTooLarge as exc:
        name = path.relative_to(folder) if path.is_relative_to(folder) else path.name
        raise Quarantined("too_large", f"{name}: {str(exc).rpartition(': ')[2]}") from exc


def _input_pattern(commands: tuple[str, ...]) -> re.Pattern[str]:
    """`\\name{path}` for each command, TeX's bare `\\input path`, and the import package's
    `\\(sub)import{dir}{file}` (also `\\inputfrom`, `\\includefrom` and their `sub` forms)."""
    names = "|".join(re.escape(c) for c in commands)
    return re.compile(
        rf"\\(?:({names})(?![a-zA-Z@])\s*\{{([^{{}}]*)\}}|input[ \t]+([^\s{{}}\\%#]+)"
        r"|(sub)?(?:import|inputfrom|includefrom)\*?\s*\{([^{}]*)\}\s*\{([^{}]*)\})"
    )


def _written(match: re.Match[str]) -> str:
    written = match.group(2) or match.group(3) or match.group(6) or ""
    return written.strip().strip('"').strip()


def inlined_source(folder: Path, main: Path, limits: CleanSettings | None = None) -> str:
    """The main file with every input inlined and comments removed, preamble included."""
    return Inliner(folder, main, limits).read(main)
