"""What Markov-cluster, RAPID-style and LongScope-style share (docs/design.md §15): the papers as
word-counted chunks, evidence shown to the model in the papers' own numbered tags, the
dataset's task as a brief without the papers, word budgets, and the section writer.

Each method writes section by section from short prompts, so no prompt carries all the
papers: that is how these methods keep the middle of a long input in view."""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from pydantic import Field

from lilo.tasks.config import Section
from lilo.tasks.errors import InputError
from lilo.tasks.methods._prompts import _template, task_instruction
from lilo.tasks.methods.base import Run
from lilo.tasks.text import count_words

__all__ = [
    "Chunk",
    "ChunkedSection",
    "abstract",
    "brief",
    "budgets",
    "evidence",
    "prompt",
    "word_chunks",
    "write_section",
]

_ABSTRACT_RE = re.compile(r"\\begin\{abstract\}(.*?)\\end\{abstract\}", re.S)
_PLACEHOLDER = "(this paper's passages are shown below where a step needs them)"

Chat = Callable[[str, str], str]  # (prompt, call label) -> reply


class ChunkedSection(Section):
    """A method section whose papers are cut by `word_chunks`: Markov-cluster's authors'
    500 words with 20 shared, which RAPID-style and LongScope-style take too."""

    chunk_words: int = Field(500, gt=0)
    overlap_words: int = Field(20, ge=0)


@dataclass(frozen=True)
class Chunk:
    paper: int  # 1-based, in reading order
    index: int  # position in the whole input, 0-based
    text: str


def word_chunks(texts: Sequence[str], size: int, overlap: int) -> list[Chunk]:
    """Each paper cut into windows of `size` whitespace words sharing `overlap` (the
    authors' code counts words), in document order; the text keeps its line breaks."""
    if not 0 <= overlap < size:
        raise InputError(
            f"overlap {overlap} must be >= 0 and below chunk size {size}: fix the method's "
            "overlap_words/chunk_words in the settings (generate.<method>)"
        )
    chunks: list[Chunk] = []
    for paper, text in enumerate(texts, 1):
        tokens = re.findall(r"\S+\s*", text)
        for start in range(0, max(len(tokens) - overlap, 1), size - overlap):
            piece = "".join(tokens[start : start + size]).strip()
            if piece:
                chunks.append(Chunk(paper, len(chunks), piece))
    return chunks


def evidence(chunks: Sequence[Chunk]) -> str:
    """Chunks in document order, each in its paper's numbered tag."""
    ordered = sorted(chunks, key=lambda c: c.index)
    return "\n\n".join(f'<paper id="{c.paper}">\n{c.text}\n</paper>' for c in ordered)


def abstract(text: str) -> str:
    """A paper's abstract environment, else its first paragraph."""
    match = _ABSTRACT_RE.search(text)
    if match:
        return match.group(1).strip()
    return next((p.strip() for p in re.split(r"\n\s*\n", text) if count_words(p) >= 20), "")


def brief(run: Run) -> str:
    """The dataset's task instruction with each paper replaced by a note, so every call
    follows the dataset's task without carrying the whole input."""
    return task_instruction(run.pack, [_PLACEHOLDER] * len(run.papers), run.target_words)


def budgets(total: int, weights: Sequence[float]) -> list[int]:
    """`total` words split in proportion to `weights` (largest remainder; sums to total)."""
    if not weights:
        return []
    shares = list(weights) if sum(weights) > 0 else [1.0] * len(weights)
    raw = [total * w / sum(shares) for w in shares]
    out = [math.floor(r) for r in raw]
    for i in sorted(range(len(raw)), key=lambda i: (out[i] - raw[i], i))[: total - sum(out)]:
        out[i] += 1
    return out


def prompt(name: str, **fields: Any) -> str:
    return _template(name).render(**fields)


def write_section(chat: Chat, label: str, words: int, max_words: int, **fields: Any) -> str:
    """One section in ceil(words / max_words) calls (one reply cannot reach 4k-16k words),
    each shown the section's text so far; the first part opens with its heading."""
    parts = max(1, math.ceil(words / max_words))
    shown = {"context": "", "depends": "", "children": "", "evidence": "", "guide": "", **fields}
    text: list[str] = []
    for part, share in enumerate(budgets(words, [1.0] * parts), 1):
        reply = chat(
            prompt(
                "section",
                words=share,
                part=part,
                parts=parts,
                written="\n\n".join(text),
                **shown,
            ),
            f"{label}.{part}" if parts > 1 else label,
        )
        text.append(reply.strip())
    return "\n\n".join(t for t in text if t)
