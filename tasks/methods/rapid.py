"""RAPID-style (docs/design.md §15; RAPID, Gu et al.), lite variant on the three papers: the papers'
abstracts give the introduction; an outline follows it, modelled on the papers' own section
structure; atomic aspects of the outline retrieve their evidence among the papers' chunks;
the outline is edited with what the evidence shows; a dependency plan orders the writing
(topologically; a cycle falls back to the outline order, recorded), and each section is
written from its evidence and the sections it builds on, within its word budget."""

from __future__ import annotations

import functools
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
from pydantic import Field

from lilo.tasks.config import output_values
from lilo.tasks.methods._section_writer import (
    Chunk,
    ChunkedSection,
    abstract,
    brief,
    budgets,
    evidence,
    prompt,
    word_chunks,
    write_section,
)
from lilo.tasks.methods._skeleton import Node, parse_skeleton, render
from lilo.tasks.methods._toposort import topological_order
from lilo.tasks.methods.base import Draft, MethodSettings, Run, Writer, method
from lilo.tasks.paper_tags import paper_blocks

__all__ = ["RapidSettings", "parse_dependencies", "rapid", "structures"]

_SECTION_RE = re.compile(r"\\(section|subsection)\*?\{([^{}]*)\}")
_DEPENDS_RE = re.compile(r"^\W*(\d+)\s*[:.)\-]\s*(.*)$")


class RapidSettings(ChunkedSection):
    """RAPID-style (docs/design.md §15): retrieval of the top 5 chunks per attribute."""

    top_k: int = Field(5, gt=0)
    max_attributes: int = Field(12, gt=0)
    # Evidence chunks shown per section, at most.
    section_chunks: int = Field(10, gt=0)
    # The introduction's share of the length; the rest is split over the outline's sections.
    intro_share: float = Field(0.1, gt=0.0, lt=1.0)
    section_max_words: int = Field(1000, gt=0)


def _args(s: MethodSettings[RapidSettings]) -> dict[str, Any]:
    return {
        **output_values(s.own),
        "embedding": s.embedder,
        "temperature": s.llm.temperature,
        "max_tokens": s.generate.step_max_tokens,
    }


def structures(texts: list[str]) -> str:
    """Each paper's own section headings as a Markdown outline."""
    out = []
    for i, text in enumerate(texts, 1):
        lines = [f"{'##' if k == 'section' else '###'} {h}" for k, h in _SECTION_RE.findall(text)]
        out.append(f"Paper {i}:\n" + "\n".join(lines))
    return "\n\n".join(out)


def parse_dependencies(text: str, n: int) -> dict[int, list[int]]:
    """`N: a, b` lines (or `N: None`) to {N: [a, b]}, for sections 1..n."""
    found: dict[int, list[int]] = {}
    for line in text.splitlines():
        match = _DEPENDS_RE.match(line)
        if match and 1 <= int(match.group(1)) <= n:
            found[int(match.group(1))] = [int(d) for d in re.findall(r"\d+", match.group(2))]
    return found


def _sections(nodes: list[Node]) -> list[tuple[Node, list[Node]]]:
    """Top-level sections with their subsections."""
    out: list[tuple[Node, list[Node]]] = []
    for node in nodes:
        if node.level == 2:
            out.append((node, []))
        elif node.level > 2 and out:
            out[-1][1].append(node)
    return out


@dataclass(frozen=True)
class _Params:
    """The factory's arguments, which every step reads."""

    chunk_words: int
    overlap_words: int
    top_k: int
    max_attributes: int
    section_chunks: int
    intro_share: float
    section_max_words: int
    temperature: float
    max_tokens: int


@method("rapid", args=_args, settings=RapidSettings)
def rapid(
    *,
    chunk_words: int,
    overlap_words: int,
    top_k: int,
    max_attributes: int,
    section_chunks: int,
    intro_share: float,
    section_max_words: int,
    embedding: str,
    temperature: float,
    max_tokens: int,
) -> Writer:
    p = _Params(chunk_words, overlap_words, top_k, max_attributes, section_chunks, intro_share,
                section_max_words, temperature, max_tokens)  # fmt: skip
    return functools.partial(_write, p)


Chat = Callable[[str, str], str]


def _write(p: _Params, run: Run) -> Draft:
    """The steps in order: introduction, outline, aspects and their evidence, the edited
    outline, its dependency order, then each section."""

    def chat(text: str, label: str) -> str:
        return run.chat(text, label, temperature=p.temperature, max_tokens=p.max_tokens)

    texts, task = [paper.text for paper in run.papers], brief(run)
    intro_words = round(run.target_words * p.intro_share)
    intro = _introduction(chat, p, task, texts, intro_words)
    reply = chat(
        prompt("rapid_outline", brief=task, intro=intro, structures=structures(texts)), "outline"
    )
    draft = parse_skeleton(reply)
    aspects = _aspects(chat, p, task, draft)
    chunks = word_chunks(texts, p.chunk_words, p.overlap_words)
    vectors = run.embedder.embed([c.text for c in chunks])
    aspect_vectors = run.embedder.embed(aspects)
    found = {a: _top(vectors @ v, p.top_k) for a, v in zip(aspects, aspect_vectors, strict=True)}
    outline = _edited(chat, task, draft, found, chunks)
    sections = _sections(outline) or [(Node(2, "The papers"), [])]
    numbered = "\n".join(f"{n}. {s.heading}" for n, (s, _) in enumerate(sections, 1))
    depends = parse_dependencies(
        chat(prompt("rapid_dependencies", sections=numbered), "dependencies"), len(sections)
    )
    order, acyclic = topological_order(list(range(1, len(sections) + 1)), depends)
    heads = run.embedder.embed([_describe(s, subs) for s, subs in sections])
    owner = {a: int(np.argmax(heads @ v)) for a, v in zip(aspects, aspect_vectors, strict=True)}
    words = budgets(run.target_words - intro_words, [1 + len(subs) for _, subs in sections])
    plan = render(outline)
    written, evidence_of = _write_sections(
        chat, p, task, plan, sections, order, depends, words,
        _Evidence(chunks, vectors, heads, found, owner),
    )  # fmt: skip
    title = [f"# {n.heading}" for n in outline[:1] if n.level == 1]
    text = "\n\n".join([*title, intro, *(written[n] for n in range(1, len(sections) + 1))])
    structure = {
        "outline_draft": render(draft),
        "outline": plan,
        "aspects": dict(found),
        "aspect_section": {a: s + 1 for a, s in owner.items()},
        "dependencies": {str(n): depends.get(n, []) for n in range(1, len(sections) + 1)},
        "order": order,
        "order_acyclic": acyclic,
        "evidence": {str(n): idx for n, idx in evidence_of.items()},
        "section_words": [intro_words, *words],
        "embedder": run.embedder.label,
    }
    return Draft(text, plan=tuple(plan.splitlines()), structure=structure)


def _introduction(chat: Chat, p: _Params, task: str, texts: list[str], words: int) -> str:
    """The introduction, from the papers' abstracts."""
    return write_section(
        chat,
        "intro",
        words,
        p.section_max_words,
        brief=task,
        heading="Introduction",
        level=2,
        evidence=paper_blocks([abstract(t) for t in texts]),
        guide="the field, its history, progress and challenges, from the abstracts",
    )


def _aspects(chat: Chat, p: _Params, task: str, outline: list[Node]) -> list[str]:
    """The outline's atomic aspects, at most `max_attributes`."""
    reply = chat(
        prompt("rapid_attributes", brief=task, outline=render(outline), n=p.max_attributes),
        "attributes",
    )
    aspects = [a for a in (re.sub(r"^\W*\d*\W*", "", x).strip() for x in reply.splitlines()) if a]
    return aspects[: p.max_attributes]


def _edited(
    chat: Chat, task: str, outline: list[Node], found: dict[str, list[int]], chunks: list[Chunk]
) -> list[Node]:
    """The outline edited with what each aspect's evidence shows; the draft when the edit
    holds no section."""
    shown = "\n".join(
        f"- {a} (papers {', '.join(str(p) for p in sorted({chunks[i].paper for i in idx}))}): "
        f"{chunks[idx[0]].text[:300]}"
        for a, idx in found.items()
        if idx
    )
    reply = chat(prompt("rapid_edit", brief=task, outline=render(outline), aspects=shown), "edit")
    edited = parse_skeleton(reply)
    return edited if _sections(edited) else outline


@dataclass(frozen=True)
class _Evidence:
    """The chunks, their vectors and the sections' heads, and which aspect found which
    chunks (`found`) for which section (`owner`)."""

    chunks: list[Chunk]
    vectors: np.ndarray
    heads: np.ndarray
    found: dict[str, list[int]]
    owner: dict[str, int]

    def pool(self, n: int, top_k: int, most: int) -> list[int]:
        """Section `n`'s chunks: its aspects' and its own best, the most relevant first."""
        mine = [i for a, idx in self.found.items() if self.owner[a] == n - 1 for i in idx]
        relevance = self.vectors @ self.heads[n - 1]
        pool = list(dict.fromkeys(mine + _top(relevance, top_k)))
        return sorted(pool, key=lambda i: -relevance[i])[:most]


def _write_sections(
    chat: Chat,
    p: _Params,
    task: str,
    plan: str,
    sections: list[tuple[Node, list[Node]]],
    order: list[int],
    depends: dict[int, list[int]],
    words: list[int],
    found: _Evidence,
) -> tuple[dict[int, str], dict[int, list[int]]]:
    """Each section in dependency order, from its evidence and the sections it builds on;
    returns the sections and each one's chunk indices."""
    written: dict[int, str] = {}
    evidence_of: dict[int, list[int]] = {}
    for n in order:
        section, subs = sections[n - 1]
        pool = found.pool(n, p.top_k, p.section_chunks)
        evidence_of[n] = sorted(pool)
        written[n] = write_section(
            chat,
            f"section{n}",
            words[n - 1],
            p.section_max_words,
            brief=task,
            context=plan,
            depends="\n\n".join(written[d] for d in depends.get(n, []) if d in written),
            evidence=evidence([found.chunks[i] for i in pool]),
            heading=section.heading,
            level=2,
            guide="; ".join(s.heading for s in subs),
        )
    return written, evidence_of


def _describe(section: Node, subs: list[Node]) -> str:
    return "; ".join([section.heading, *(s.heading for s in subs)])


def _top(scores: np.ndarray, k: int) -> list[int]:
    """The k best chunk indices; ties go to the earlier chunk."""
    return [int(i) for i in np.lexsort((np.arange(len(scores)), -scores))[:k]]
