"""The offline engine's own reading of a skeleton (a Markdown heading tree, each heading
followed by at most one guide line) and of edit lines (`ADD: heading | guide`,
`DELETE: heading`), as a model reads the text it is shown. Written apart from the method
that sends them (tasks/methods/_skeleton.py), so a drift in that format shows up as worse
offline replies instead of being parsed the same way on both sides."""

from __future__ import annotations

from dataclasses import dataclass, replace

__all__ = ["Heading", "Edit", "apply", "key", "leaves", "read_edits", "read_tree", "write"]


@dataclass(frozen=True)
class Heading:
    level: int
    heading: str
    guide: str = ""


@dataclass(frozen=True)
class Edit:
    kind: str  # ADD | DELETE
    heading: str
    guide: str = ""


def key(heading: str) -> str:
    """Lower-case letters and digits only, words joined by one space."""
    cleaned = "".join(c if c.isascii() and c.isalnum() else " " for c in heading.lower())
    return " ".join(cleaned.split())


def read_tree(text: str) -> list[Heading]:
    tree: list[Heading] = []
    for line in text.splitlines():
        stripped = line.strip()
        marks = len(stripped) - len(stripped.lstrip("#"))
        title = stripped[marks:].rstrip("#").strip()
        if 1 <= marks <= 6 and stripped[marks : marks + 1].isspace() and title:
            tree.append(Heading(marks, title))
        elif tree and stripped and not tree[-1].guide:
            tree[-1] = replace(tree[-1], guide=stripped)
    return tree


def write(tree: list[Heading]) -> str:
    lines = []
    for node in tree:
        lines.append(f"{'#' * node.level} {node.heading}")
        if node.guide:
            lines.append(node.guide)
    return "\n".join(lines)


def read_edits(text: str) -> list[Edit]:
    edits = []
    for line in text.splitlines():
        body = line.lstrip(" \t*-•>`'\"")
        word = body[:6].upper()
        kind = "DELETE" if word.startswith("DELETE") else "ADD" if word.startswith("ADD") else ""
        rest = body[len(kind) :].lstrip(" \t:*-") if kind else ""
        if rest.strip():
            heading, _, guide = rest.partition("|")
            edits.append(Edit(kind, heading.strip(), guide.strip()))
    return edits


def apply(tree: list[Heading], edits: list[Edit]) -> list[Heading]:
    """DELETE removes a section and everything under it; ADD puts a new top-level section
    before the closing one, unless a section of that name is there already."""
    out = list(tree)
    for edit in edits:
        names = [key(n.heading) for n in out]
        name = key(edit.heading)
        if edit.kind == "DELETE" and name in names:
            first = names.index(name)
            last = first + 1
            while last < len(out) and out[last].level > out[first].level:
                last += 1
            del out[first:last]
        elif edit.kind == "ADD" and name not in names:
            tops = [i for i, n in enumerate(out) if n.level == 2]
            out.insert(
                tops[-1] if len(tops) > 1 else len(out), Heading(2, edit.heading, edit.guide)
            )
    return out


def leaves(tree: list[Heading]) -> list[Heading]:
    """The sections with no subsection under them (the title is never one)."""
    return [
        n
        for i, n in enumerate(tree)
        if n.level > 1 and (i + 1 == len(tree) or tree[i + 1].level <= n.level)
    ]
