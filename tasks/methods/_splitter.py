"""The recursive splitter RAL-Writer chunks its input with (DESIGN §7), after LangChain's
`RecursiveCharacterTextSplitter` as the reference implementation used it: try blank lines,
then lines, then ". ", then ", ", then spaces, and merge the pieces back into chunks of at
most `chunk_words` with `overlap_words` carried over.

Length is counted in nltk word tokens, as the reference counts with
`len(nltk.word_tokenize(text))`. `word_tokenize` first splits sentences with punkt, whose
model is downloaded data; here a regex stands in for punkt (a sentence ends at `.`, `?` or
`!` followed by whitespace or by one of punkt's after-sentence characters) and nltk's own
Treebank tokenizer, which needs no data, tokenizes each sentence. On the 15 papers in
tests/corpus it is within 0.2% of real punkt per paper and gives the same chunk counts
(docs/reference-measurements.md).

Each piece is tokenized once and a window's length is the sum of its pieces plus what the
separators add (one token each for "." and ","). The reference re-tokenizes the joined text
for every piece it adds, and joins the candidate piece with no separator, which can merge
two words into one token; neither changes more than a token or two per chunk.
"""

from __future__ import annotations

import functools
import re
from collections import deque
from typing import Any

__all__ = ["SEPARATORS", "split_recursive", "word_tokens"]

SEPARATORS = ("\n\n", "\n", ". ", ", ", " ")

# A sentence ends after . ? ! when whitespace or one of punkt's "after token" characters
# follows (nltk's PunktLanguageVars period context); punkt's abbreviation list is not kept.
_SENTENCE_END = re.compile(r"(?<=[.?!])(?=[\s?!)\";}\]*:@'({\[])")


@functools.cache
def _treebank() -> Any:
    from nltk.tokenize import NLTKWordTokenizer  # nltk takes 3 s to import: when first used

    return NLTKWordTokenizer()


def word_tokens(text: str) -> int:
    """`len(nltk.word_tokenize(text))`, with a regex sentence split in place of punkt."""
    treebank = _treebank()
    return sum(len(treebank.tokenize(s)) for s in _SENTENCE_END.split(text) if s.strip())


@functools.cache
def _joint(separator: str) -> int:
    """Tokens a separator adds between two pieces ("." and "," are tokens, spaces none)."""
    return word_tokens(f"a{separator}b") - 2


def split_recursive(text: str, chunk_words: int, overlap_words: int) -> list[str]:
    """Chunks of at most `chunk_words` nltk word tokens (a piece no separator can split
    stays whole), consecutive chunks sharing up to `overlap_words` tokens."""
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
    fitting: list[tuple[str, int]] = []
    for piece in (p for p in text.split(separator) if p.strip()):
        length = word_tokens(piece)
        if length < size:  # the reference's test: a piece of exactly `size` is split further
            fitting.append((piece, length))
            continue
        if fitting:
            chunks.extend(_merge(fitting, separator, size, overlap))
            fitting = []
        chunks.extend(_split(piece, rest, size, overlap) if rest else [piece])
    if fitting:
        chunks.extend(_merge(fitting, separator, size, overlap))
    return chunks


def _merge(pieces: list[tuple[str, int]], separator: str, size: int, overlap: int) -> list[str]:
    """LangChain's merge: a window is emitted when the next piece would overflow it, then
    pieces leave its front until at most `overlap` tokens remain and the next piece fits."""
    joint = _joint(separator)
    chunks: list[str] = []
    window: deque[tuple[str, int]] = deque()
    total = 0  # tokens of separator.join(window)
    for piece, length in pieces:
        if window and total + joint + length > size:
            chunks.append(separator.join(p for p, _ in window).strip())
            while window and (total > overlap or total + joint + length > size):
                total -= window.popleft()[1] + (joint if window else 0)
        total += length + (joint if window else 0)
        window.append((piece, length))
    if window:
        chunks.append(separator.join(p for p, _ in window).strip())
    return chunks
