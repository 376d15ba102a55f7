"""How papers appear inside prompts: each wrapped in numbered paper tags (docs/design.md §7).

Both the prompt builders and the offline engine use these two functions, so the engine
reads exactly what a real model would be shown.
"""

from __future__ import annotations

import re
from typing import Any, Literal, overload

__all__ = ["paper_blocks", "parse_paper_blocks"]

# lilo's tags (`<paper id="1">`) and the published benchmark's (`<paper 1>`).
_BLOCK_RE = re.compile(r'<paper(?: id="(\d+)"| (\d+))>\n(.*?)\n</paper(?: \d+)?>', re.S)


def paper_blocks(texts: list[str]) -> str:
    """`<paper id="1">...</paper>` blocks, numbered from 1 in sample order."""
    return "\n\n".join(f'<paper id="{i}">\n{t}\n</paper>' for i, t in enumerate(texts, 1))


@overload
def parse_paper_blocks(prompt: str) -> list[tuple[int, str]]: ...
@overload
def parse_paper_blocks(
    prompt: str, *, with_offsets: Literal[True]
) -> list[tuple[int, int, str]]: ...


def parse_paper_blocks(prompt: str, *, with_offsets: bool = False) -> list[Any]:
    """(number, text) per paper block in the prompt; with_offsets: (number, start, text),
    start being where the text begins in the prompt."""
    found = []
    for m in _BLOCK_RE.finditer(prompt):
        number = int(m.group(1) or m.group(2))
        found.append((number, m.start(3), m.group(3)) if with_offsets else (number, m.group(3)))
    return found
