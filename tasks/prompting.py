"""How papers appear inside prompts: each wrapped in numbered paper tags (DESIGN §7).

Both the prompt builders and the offline engine use these two functions, so the engine
reads exactly what a real model would be shown.
"""

from __future__ import annotations

import re

__all__ = ["paper_blocks", "parse_paper_blocks"]

_BLOCK_RE = re.compile(r'<paper id="(\d+)">\n(.*?)\n</paper>', re.S)


def paper_blocks(texts: list[str]) -> str:
    """`<paper id="1">...</paper>` blocks, numbered from 1 in sample order."""
    return "\n\n".join(f'<paper id="{i}">\n{t}\n</paper>' for i, t in enumerate(texts, 1))


def parse_paper_blocks(prompt: str) -> list[tuple[int, str]]:
    return [(int(m.group(1)), m.group(2)) for m in _BLOCK_RE.finditer(prompt)]
