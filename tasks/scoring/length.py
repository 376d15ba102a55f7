"""Length score S_l (docs/design.md §8), words counted with the one word rule."""

from __future__ import annotations

from lilo.tasks.records import ScoreRow
from lilo.tasks.scoring.base import ScoreContext, Scored, scorer
from lilo.tasks.text import count_words

__all__ = ["length", "length_score"]


def length_score(required: int, generated: int) -> float:
    """S_l x100: 100 at or past the required length; 1 - (l/l' - 1)/2 below it, floored at 0,
    so half the length scores 50 and a third or less scores 0."""
    if generated >= required:
        return 100.0
    if generated <= 0:
        return 0.0
    return 100.0 * max(0.0, 1.0 - (required / generated - 1.0) / 2.0)


@scorer("length", label="S_l", order=1, about="length: 100 at or past the target, less below it")
def length(ctx: ScoreContext) -> Scored:
    generation = ctx.generation
    generated = count_words(generation.text)
    value = length_score(generation.target_words, generated)
    detail = {"required_words": generation.target_words, "generated_words": generated}
    return Scored([ScoreRow(generation.generation_id, "length", value, detail)])
