"""The recursive splitter RAL-Writer chunks its input with (DESIGN §7), after LangChain's
`RecursiveCharacterTextSplitter` as the reference implementation used it: try blank lines,
then lines, then ". ", then ", ", then spaces, and merge the pieces back into chunks of at
most `chunk_words` with `overlap_words` carried over.

Length is counted in whitespace-separated word tokens rather than with `count_words`: a
LaTeX-heavy piece (an equation) would otherwise measure zero words and never be split.
Joining pieces with any of the separators keeps the counts additive.
"""

from __future__ import annotations

from collections import deque

__all__ = ["SEPARATORS", "split_recursive", "word_tokens"]

SEPARATORS = ("\n\n", "\n", ". ", ", ", " ")


def word_tokens(text: str) -> int:
    return len(text.split())


def split_recursive(text: str, chunk_words: int, overlap_words: int) -> list[str]:
    if not 0 <= overlap_words < chunk_words:
        raise ValueError(
            f"overlap_words={overlap_words} must be >= 0 and below chunk_words={chunk_words}: "
            "fix generate.ral in the settings"
        )
    return [c for c in _split(text, SEPARATORS, chunk_words, overlap_words) if c]


def _split(text: str, separators: tuple[str, ...], size: int, overlap: int) -> list[str]:
    separator, rest = separators[-1], ()
    for i, candidate in enumerate(separators):
        if candidate in text:
            separator, rest = candidate, separators[i + 1 :]
            break
    chunks: list[str] = []
    fitting: list[str] = []
    for piece in (p for p in text.split(separator) if p.strip()):
        if word_tokens(piece) <= size:
            fitting.append(piece)
            continue
        if fitting:
            chunks.extend(_merge(fitting, separator, size, overlap))
            fitting = []
        chunks.extend(_split(piece, rest, size, overlap) if rest else [piece])
    if fitting:
        chunks.extend(_merge(fitting, separator, size, overlap))
    return chunks


def _merge(pieces: list[str], separator: str, size: int, overlap: int) -> list[str]:
    chunks: list[str] = []
    window: deque[str] = deque()
    total = 0
    for piece in pieces:
        length = word_tokens(piece)
        if window and total + length > size:
            chunks.append(separator.join(window).strip())
            while window and (total > overlap or total + length > size):
                total -= word_tokens(window.popleft())
        window.append(piece)
        total += length
    if window:
        chunks.append(separator.join(window).strip())
    return chunks
