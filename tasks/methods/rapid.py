"""RAPID-style (docs/design.md §15; RAPID, Gu et al.), lite variant on the three papers: the papers'
abstracts give the introduction; an outline follows it, modelled on the papers' own section
structure; atomic aspects of the outline retrieve their evidence among the papers' chunks;
the outline is edited with what the evidence shows; a dependency plan orders the writing
(topologically; a cycle falls back to the outline order, recorded), and each section is
written from its evidence and the sections it builds on, within its word budget."""

from __future__ import annotations

import re
from typing import Any

import numpy as np
from pydantic import Field

from lilo.tasks.config import Section, output_values
from lilo.tasks.methods._section_writer import (
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


class RapidSettings(Section):
    """RAPID-style (docs/design.md §15): retrieval of the top 5 chunks per attribute."""

    chunk_words: int = Field(500, gt=0)
    overlap_words: int = Field(20, ge=0)
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
    def write(run: Run) -> Draft:
        def chat(text: str, label: str) -> str:
            return run.chat(text, label, temperature=temperature, max_tokens=max_tokens)

        texts = [p.text for p in run.papers]
        task, room = brief(run), section_max_words
        intro_words = round(run.target_words * intro_share)
        intro = write_section(
            chat,
            "intro",
            intro_words,
            room,
            brief=task,
            heading="Introduction",
            level=2,
            evidence=paper_blocks([abstract(t) for t in texts]),
            guide="the field, its history, progress and challenges, from the abstracts",
        )
        reply = chat(
            prompt("rapid_outline", brief=task, intro=intro, structures=structures(texts)),
            "outline",
        )
        outline = draft = parse_skeleton(reply)
        sections = _sections(outline) or [(Node(2, "The papers"), [])]
        reply = chat(
            prompt("rapid_attributes", brief=task, outline=render(outline), n=max_attributes),
            "attributes",
        )
        aspects = [
            a for a in (re.sub(r"^\W*\d*\W*", "", x).strip() for x in reply.splitlines()) if a
        ]
        aspects = aspects[:max_attributes]
        chunks = word_chunks(texts, chunk_words, overlap_words)
        vectors = run.embedder.embed([c.text for c in chunks])
        aspect_vectors = run.embedder.embed(aspects)
        found = {a: _top(vectors @ v, top_k) for a, v in zip(aspects, aspect_vectors, strict=True)}
        shown = "\n".join(
            f"- {a} (papers {', '.join(str(p) for p in sorted({chunks[i].paper for i in idx}))}): "
            f"{chunks[idx[0]].text[:300]}"
            for a, idx in found.items()
            if idx
        )
        reply = chat(
            prompt("rapid_edit", brief=task, outline=render(outline), aspects=shown), "edit"
        )
        edited = parse_skeleton(reply)
        if _sections(edited):
            outline, sections = edited, _sections(edited)
        numbered = "\n".join(f"{n}. {s.heading}" for n, (s, _) in enumerate(sections, 1))
        reply = chat(prompt("rapid_dependencies", sections=numbered), "dependencies")
        depends = parse_dependencies(reply, len(sections))
        order, acyclic = topological_order(list(range(1, len(sections) + 1)), depends)
        heads = run.embedder.embed([_describe(s, subs) for s, subs in sections])
        owner = {a: int(np.argmax(heads @ v)) for a, v in zip(aspects, aspect_vectors, strict=True)}
        words = budgets(run.target_words - intro_words, [1 + len(subs) for _, subs in sections])
        plan = render(outline)
        written: dict[int, str] = {}
        evidence_of: dict[int, list[int]] = {}
        for n in order:
            section, subs = sections[n - 1]
            mine = [i for a, idx in found.items() if owner[a] == n - 1 for i in idx]
            relevance = vectors @ heads[n - 1]
            pool = list(dict.fromkeys(mine + _top(relevance, top_k)))
            pool = sorted(pool, key=lambda i: -relevance[i])[:section_chunks]
            evidence_of[n] = sorted(pool)
            written[n] = write_section(
                chat,
                f"section{n}",
                words[n - 1],
                room,
                brief=task,
                context=plan,
                depends="\n\n".join(written[d] for d in depends.get(n, []) if d in written),
                evidence=evidence([chunks[i] for i in pool]),
                heading=section.heading,
                level=2,
                guide="; ".join(s.heading for s in subs),
            )
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

    return write


def _describe(section: Node, subs: list[Node]) -> str:
    return "; ".join([section.heading, *(s.heading for s in subs)])


def _top(scores: np.ndarray, k: int) -> list[int]:
    """The k best chunk indices; ties go to the earlier chunk."""
    return [int(i) for i in np.lexsort((np.arange(len(scores)), -scores))[:k]]
