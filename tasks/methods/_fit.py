"""A prompt that reads the whole papers, fitted to the endpoint's window
(`generate.fit_input = "truncate"`, docs/design.md §7).

Each paper found whole in the prompt is cut to its share of the room the window leaves:
window - the rest of the prompt - the call's output budget (at most half the window) -
`MARGIN_TOKENS`, shared equally, a paper shorter than its share keeping all of it and
leaving the rest to the others. Tokens are the endpoint's where it counts them, else the
estimate (tasks/llm/window.py); a paper is cut at its last paragraph end within its share,
else its last sentence end, else its last space. A window that is unknown cuts nothing.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from lilo.tasks.llm import LLMClient
from lilo.tasks.llm.window import MARGIN_TOKENS
from lilo.tasks.text import count_words

__all__ = ["Cut", "cut_text", "fit_papers", "reserved"]

# How many times the shares are narrowed when the cut prompt, counted again, is still long.
_TRIES = 6
_SENTENCE_END = re.compile(r"[.!?][\"')\]]*\s")


@dataclass(frozen=True)
class Cut:
    """What fitting one prompt left out of its papers, the window it fitted to, and whether
    the prompt now fits it with its output budget (at most half the window)."""

    tokens: int = 0
    words: int = 0
    window: int = 0
    fits: bool = True


def cut_text(text: str, chars: int) -> str:
    """`text` within its first `chars` characters: to a paragraph end in their second half,
    else to their last sentence end, else to their last space ("" with none)."""
    if chars >= len(text):
        return text
    head = text[: max(chars, 0)]
    paragraph = head.rfind("\n\n")
    if paragraph >= len(head) // 2:
        return head[:paragraph].rstrip()
    sentences = [m.start() + 1 for m in _SENTENCE_END.finditer(head)]
    if sentences:
        return head[: sentences[-1]]
    return head[: max(head.rfind(" "), 0)].rstrip()


def reserved(max_tokens: int | None, window: int) -> int:
    """The output budget fitting leaves room for: the call's, at most half the window."""
    return min(max_tokens or 0, window // 2)


def _shares(sizes: Sequence[int], room: int) -> list[int]:
    """Each size's share of `room`: equal shares, a size under its share kept whole and
    what it leaves shared among the others."""
    shares = [0] * len(sizes)
    left, order = room, sorted(range(len(sizes)), key=lambda i: sizes[i])
    for placed, i in enumerate(order):
        shares[i] = min(sizes[i], left // (len(order) - placed))
        left -= shares[i]
    return shares


def fit_papers(
    llm: LLMClient, prompt: str, texts: Sequence[str], max_tokens: int | None
) -> tuple[str, Cut]:
    """`prompt` with each of `texts` found whole in it cut to its share of the room the
    endpoint's window leaves, and what was left out. The prompt as it is where it fits,
    where the window is unknown, or where the rest of it leaves no room for the papers
    (`Cut.fits` False: the call fails `context_exceeded` as it would have)."""
    window, _ = llm.window.size()
    present = [t for t in dict.fromkeys(texts) if t and t in prompt]
    if not window or not present:
        return prompt, Cut(window=window)

    def tokens(text: str) -> int:
        return llm.window.prompt_tokens([{"role": "user", "content": text}])[0]

    reserve = reserved(max_tokens, window) + MARGIN_TOKENS
    whole = tokens(prompt)
    if whole + reserve <= window:
        return prompt, Cut(window=window)
    rest = prompt
    for text in present:
        rest = rest.replace(text, "", 1)
    rest_tokens = tokens(rest)
    room = window - rest_tokens - reserve
    if room < len(present):
        return prompt, Cut(window=window, fits=False)
    paper_tokens = max(whole - rest_tokens, 1)
    sizes = [len(t) for t in present]
    # Each paper's tokens, estimated from its share of the papers' characters.
    estimated = [max(1, paper_tokens * n // sum(sizes)) for n in sizes]
    fitted, target = prompt, room
    for _ in range(_TRIES):
        cuts = [
            cut_text(t, len(t) * share // size)
            for t, share, size in zip(present, _shares(estimated, target), estimated, strict=True)
        ]
        fitted = prompt
        for text, kept in zip(present, cuts, strict=True):
            fitted = fitted.replace(text, kept, 1)
        used = tokens(fitted)
        if used + reserve <= window:
            words = sum(count_words(t) - count_words(k) for t, k in zip(present, cuts, strict=True))
            return fitted, Cut(whole - used, words, window)
        # Narrowed by how far the papers' part overshot, and a little more.
        over = used + reserve - window
        target = max(0, target - over - max(over // 10, 1))
    return prompt, Cut(window=window, fits=False)
