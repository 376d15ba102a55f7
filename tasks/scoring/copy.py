"""Copy diagnostic S_copy (docs/design.md §8): the share of a summary's words that lie in
spans of at least `COPY_WORDS` consecutive words copied from the method's input (the
sample's papers as the method saw them), words by the one word rule, compared lower-cased.
A diagnostic, not a quality score: no LLM call, and the papers' word n-grams are hashed
once per sample."""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Sequence

from lilo.tasks.records import PaperText, ScoreRow
from lilo.tasks.scoring.base import ScoreContext, Scored, scorer
from lilo.tasks.text import words

__all__ = ["COPY_WORDS", "copied_share", "copy", "word_grams"]

COPY_WORDS = 8
_KEEP = 16  # samples whose n-grams are kept: the score stage takes a sample's generations together
_GRAMS: OrderedDict[tuple[str, ...], frozenset[int]] = OrderedDict()
_LOCK = threading.Lock()


def _lowered(text: str) -> list[str]:
    return [w.lower() for w in words(text)]


def word_grams(texts: Sequence[str]) -> frozenset[int]:
    """The hashes of every run of `COPY_WORDS` consecutive words of each text (no run spans
    two texts)."""
    found: set[int] = set()
    for text in texts:
        tokens = _lowered(text)
        found.update(
            hash(tuple(tokens[i : i + COPY_WORDS])) for i in range(len(tokens) - COPY_WORDS + 1)
        )
    return frozenset(found)


def copied_share(text: str, grams: frozenset[int]) -> tuple[float, int, int]:
    """(share x100, words, copied words) of `text`: a word is copied when some run of
    `COPY_WORDS` words holding it is among `grams`. 0 for a text without words."""
    tokens = _lowered(text)
    copied = [False] * len(tokens)
    for i in range(len(tokens) - COPY_WORDS + 1):
        if hash(tuple(tokens[i : i + COPY_WORDS])) in grams:
            copied[i : i + COPY_WORDS] = [True] * COPY_WORDS
    n = sum(copied)
    return (100.0 * n / len(tokens) if tokens else 0.0), len(tokens), n


def _input_grams(sample_id: str, papers: list[PaperText]) -> frozenset[int]:
    """The papers' n-grams, made once per sample (and paper contents) in this process."""
    key = (sample_id, *(p.content_sha256 for p in papers))
    with _LOCK:
        if key in _GRAMS:
            _GRAMS.move_to_end(key)
            return _GRAMS[key]
    grams = word_grams([p.text for p in papers])
    with _LOCK:
        _GRAMS[key] = grams
        while len(_GRAMS) > _KEEP:
            _GRAMS.popitem(last=False)
    return grams


@scorer(
    "copy",
    label="S_copy",
    order=10,
    diagnostic=True,
    about=f"copy diagnostic, not a quality score: % of the summary's words in runs of "
    f"{COPY_WORDS}+ words copied from its papers",
)
def copy(ctx: ScoreContext) -> Scored:
    grams = _input_grams(ctx.sample.sample_id, ctx.papers)
    value, total, copied = copied_share(ctx.generation.text, grams)
    detail = {"words": total, "copied_words": copied, "span_words": COPY_WORDS}
    return Scored([ScoreRow(ctx.generation.generation_id, "copy", value, detail)])
