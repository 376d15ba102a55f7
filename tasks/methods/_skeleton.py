"""LongScope's skeleton (docs/design.md §15): a Markdown heading tree in which each node carries a
guide line (`Extract: ... | Analyse: ...`: what to take from the papers, how to analyse
it), and the edits proposed to it, one operation per line:

    ADD: <heading> | Extract: ... | Analyse: ...
    DELETE: <heading>

Parsing never fails: a line that is neither a heading, a guide nor an operation is
ignored, so any model's reply is a usable skeleton or edit."""

from __future__ import annotations

import re
from dataclasses import dataclass, replace

__all__ = [
    "Node",
    "Op",
    "apply_edit",
    "heading_key",
    "leaves",
    "parse_edit",
    "parse_skeleton",
    "render",
]

_HEADING_RE = re.compile(r"^\s*(#{1,6})\s+(.+?)\s*#*\s*$")
_OP_RE = re.compile(r"^\W*(ADD|DELETE)\W*\s*(.+?)\s*$", re.I)


@dataclass(frozen=True)
class Node:
    level: int  # 1: the title, 2: top-level section, 3+: subsections
    heading: str
    guide: str = ""


@dataclass(frozen=True)
class Op:
    kind: str  # ADD | DELETE
    heading: str
    guide: str = ""


def heading_key(heading: str) -> str:
    """A heading's words, lower-cased: how headings are matched."""
    return " ".join(re.findall(r"[a-z0-9]+", heading.lower()))


def parse_skeleton(text: str) -> list[Node]:
    """Nodes in reading order; a guide line belongs to the heading above it."""
    nodes: list[Node] = []
    for line in text.splitlines():
        match = _HEADING_RE.match(line)
        if match:
            nodes.append(Node(len(match.group(1)), match.group(2).strip()))
        elif nodes and line.strip() and not nodes[-1].guide:
            nodes[-1] = replace(nodes[-1], guide=line.strip())
    return nodes


def render(nodes: list[Node]) -> str:
    return "\n".join(
        f"{'#' * n.level} {n.heading}" + (f"\n{n.guide}" if n.guide else "") for n in nodes
    )


def parse_edit(text: str) -> list[Op]:
    ops = []
    for line in text.splitlines():
        match = _OP_RE.match(line)
        if match:
            heading, _, guide = match.group(2).partition("|")
            ops.append(Op(match.group(1).upper(), heading.strip(), guide.strip()))
    return ops


def apply_edit(nodes: list[Node], ops: list[Op]) -> list[Node]:
    """DELETE drops a section with its subsections; ADD appends a top-level section before
    the last one (the conclusion) unless one with that heading exists."""
    out = list(nodes)
    for op in ops:
        keys = [heading_key(n.heading) for n in out]
        if op.kind == "DELETE" and heading_key(op.heading) in keys:
            at = keys.index(heading_key(op.heading))
            end = at + 1
            while end < len(out) and out[end].level > out[at].level:
                end += 1
            out = out[:at] + out[end:]
        elif op.kind == "ADD" and heading_key(op.heading) not in keys:
            tops = [i for i, n in enumerate(out) if n.level == 2]
            at = tops[-1] if len(tops) > 1 else len(out)
            out.insert(at, Node(2, op.heading, op.guide))
    return out


def leaves(nodes: list[Node]) -> list[int]:
    """Indices of the sections with no subsection (the title is never a leaf)."""
    return [
        i
        for i, n in enumerate(nodes)
        if n.level > 1 and (i + 1 == len(nodes) or nodes[i + 1].level <= n.level)
    ]
