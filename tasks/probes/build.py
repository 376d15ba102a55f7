"""What the probe tasks that build their data share (tasks/probes/kinds/): a paper's prose
as passages, a probe set's variant. Each construction is named in its probe set (e.g.
`lilo/kv-75[seed=0]`, `lilo/mdqa-20[warehouse,hard]`) and recorded with every answer as its
variant."""

from __future__ import annotations

import functools
from collections.abc import Sequence

from lilo.tasks.probe_records import Document
from lilo.tasks.probes.metric import normalize_answer
from lilo.tasks.records import PaperText
from lilo.tasks.text import count_words, split_sentences

__all__ = ["PASSAGE_WORDS", "contains", "normalized", "passages", "squash", "variant_of"]

# The authors' passages are Wikipedia chunks of about 100 words.
PASSAGE_WORDS = 100


def variant_of(probe_set: str) -> str:
    """The construction a probe set names: `published` for the authors' files, else
    `lilo[...]` (e.g. lilo[seed=0], lilo[warehouse,hard])."""
    if probe_set.startswith("liu/"):
        return "published"
    return "lilo" + probe_set[probe_set.find("[") :] if "[" in probe_set else "lilo"


def passages(paper: PaperText, words: int = PASSAGE_WORDS) -> list[Document]:
    """The paper's prose as passages of about `words` words, whole sentences, in order
    (sectioning and environment lines left out), each titled with the paper's title."""
    chunks: list[str] = []
    current: list[str] = []
    for line in paper.text.splitlines():
        if not line.strip() or line.lstrip().startswith("\\"):
            continue
        for sentence in split_sentences(line):
            current.append(sentence)
            if count_words(" ".join(current)) >= words:
                chunks.append(" ".join(current))
                current = []
    if current:
        chunks.append(" ".join(current))
    return [{"title": paper.title, "text": c} for c in chunks]


def squash(text: str) -> str:
    return " ".join(text.split())


@functools.lru_cache(maxsize=65536)
def normalized(text: str) -> str:
    return normalize_answer(text)


def contains(document: Document, answers: Sequence[str]) -> bool:
    return any(normalize_answer(a) in normalized(document["text"]) for a in answers)
