"""Where a survey's bibliography lives: the files its main document names, or what was
compiled from them.

The names are read from the main file with its inputs inlined (`\\input`, `\\include`,
`\\subfile`, `\\import`), so a biblatex preamble in `preamble.tex` counts: `\\bibliography{a,b}`,
`\\nobibliography`, `\\addbibresource[opts]{x.bib}` (with or without `.bib`; remote resources
skipped), `\\addglobalbib`, `\\addsectionbib`. A name resolves against the main file's folder,
then the archive's root, then (BibTeX's search path is not in the archive) a file of that
name anywhere in it, nearest first. Nothing outside the folder is read: archives are
untrusted. The compiled `.bbl` (the main file's own first) and a `thebibliography` pasted
into the source are the alternatives when the `.bib` files are not all there.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from lilo.tasks.clean import inlined_source
from lilo.tasks.clean._tex import environment_spans

__all__ = ["BibSources", "find_bib_sources"]

_COMMAND = re.compile(
    r"\\(bibliography|nobibliography|addbibresource|addglobalbib|addsectionbib)(?![a-zA-Z@])"
    r"\s*(\[[^\]]*\])?\s*\{([^{}]*)\}"
)
_REMOTE = re.compile(r"location\s*=\s*remote|^[a-z]+://", re.I)


@dataclass(frozen=True)
class BibSources:
    named: tuple[str, ...]  # the resources the source names, as written
    bib_files: tuple[Path, ...]  # those found, in the order named
    missing: tuple[str, ...]  # those not in the archive
    bbl: Path | None  # the compiled bibliography, if the archive has one
    embedded: str  # a `thebibliography` environment written in the source, if any


def find_bib_sources(folder: Path, main_file: str) -> BibSources:
    """What `folder/main_file` (with its inputs) names as its bibliography, and what exists."""
    main = folder / main_file
    source = inlined_source(folder, main)
    named: list[str] = []
    found: list[Path] = []
    missing: list[str] = []
    # BibTeX's commands before biblatex's (a source mixing them is odd; each kind in order).
    for match in sorted(_COMMAND.finditer(source), key=lambda m: m.group(1).startswith("add")):
        command, options, names = match.groups()
        if _REMOTE.search(options or ""):
            continue
        for name in (n.strip() for n in names.split(",")):
            if not name or _REMOTE.search(name):
                continue
            named.append(name)
            path = _find(folder, main.parent, name, exact=command.startswith("add"))
            if path is None:
                missing.append(name if name.endswith(".bib") else f"{name}.bib")
            elif path not in found:
                found.append(path)
    embedded = environment_spans(source, ("thebibliography",))
    return BibSources(
        named=tuple(named),
        bib_files=tuple(found),
        missing=tuple(dict.fromkeys(missing)),
        bbl=_bbl(folder, main),
        embedded=source[embedded[0][0] : embedded[0][3]] if embedded else "",
    )


def _find(folder: Path, base: Path, name: str, exact: bool) -> Path | None:
    """`name` as biber (`exact`: as written first) or BibTeX (`.bib` appended) looks for it."""
    candidates = [name] if name.endswith(".bib") else [f"{name}.bib"]
    if exact and not name.endswith(".bib"):
        candidates.insert(0, name)
    root = folder.resolve()
    for candidate in candidates:
        for directory in (base, folder):
            path = (directory / candidate).resolve()
            if path.is_relative_to(root) and path.is_file():
                return path
    for candidate in candidates:
        elsewhere = _nearest(folder, Path(candidate).name)
        if elsewhere is not None:
            return elsewhere
    return None


def _bbl(folder: Path, main: Path) -> Path | None:
    """The main file's own `.bbl`, else the nearest `.bbl` in the archive."""
    own = main.with_suffix(".bbl")
    if own.is_file() and own.resolve().is_relative_to(folder.resolve()):
        return own.resolve()
    return _nearest(folder, "*.bbl")


def _nearest(folder: Path, pattern: str) -> Path | None:
    root = folder.resolve()
    matches = [
        p.resolve()
        for p in folder.rglob(pattern)
        if p.is_file() and not p.is_symlink() and p.resolve().is_relative_to(root)
    ]
    return min(matches, key=lambda p: (len(p.parts), p.as_posix()), default=None)
