"""RAL-Writer's recursive splitter exactly as the reference runs it, counting nltk word tokens
(punkt, then Treebank) as the reference does. The pinned chunk lists were checked against
the reference's own splitter code."""

from __future__ import annotations

import pytest
from conftest import PAPERS

from lilo.tasks.clean.latex import clean_source
from lilo.tasks.config import Settings
from lilo.tasks.errors import InputError
from lilo.tasks.methods._splitter import split_recursive, word_tokens


# Each count is `len(nltk.word_tokenize(text))` with real punkt data.
@pytest.mark.parametrize(
    ("text", "tokens"),
    [
        ("", 0),
        ("The model fits.", 4),  # The model fits .
        ("It fits, mostly.", 5),  # It fits , mostly .
        ("It fits. It also scales.", 7),  # each sentence's final period is a token
        ("We don't know.", 5),  # We do n't know .
        ("A footnote\\footnote{It ends here.} and more.", 11),  # a sentence ends before "}"
        ("See \\citep[e.g.][]{lloyd14}.", 12),  # e.g . ] [ ] { lloyd14 } .
        ("Eq. (3) holds.", 7),  # "eq" is not among punkt's abbreviations either
        ("$\\sigma^2 = 0.5$", 5),
        # punkt knows "Dr." and "vs." as abbreviations: "Dr." and "vs." stay one token
        ("Dr. Smith went home. He was tired.", 9),
        ("Compare a vs. b here.", 6),
        # nltk 3.9, as the reference ran it: a quote inside or before a word stays on it
        # (nltk 3.10 counts 5 and 7: Mat\\ ' ern, and ' wasting)
        ("the Mat\\'ern kernel", 3),
        ("is 'wasting marginal likelihood' by", 6),
    ],
)
def test_word_tokens_literal_cases(text: str, tokens: int) -> None:
    assert word_tokens(text) == tokens


@pytest.mark.parametrize(
    ("text", "size", "overlap", "chunks"),
    [
        # a whitespace-only piece is kept: merged alone it is an empty chunk
        ("  \n\na b c d e f", 4, 1, ["", "a b c d e", "e f"]),
        # the window and the next piece are counted joined with no separator ("betagamma")
        ("alpha\nbeta\ngamma\ndelta", 2, 0, ["alpha\nbeta\ngamma", "delta"]),
        ("alpha beta gamma delta epsilon", 3, 1, ["alpha beta gamma delta", "delta epsilon"]),
        # after a chunk, pieces leave only while the window counts more than the overlap,
        # whether or not the next piece then fits (here the second chunk has 11 tokens)
        (
            "p1 a b.\n\np2 c d.\n\np3 e f g h i.",
            8,
            4,
            ["p1 a b.\n\np2 c d.", "p2 c d.\n\np3 e f g h i."],
        ),
        ("aa bb cc\n\ndd ee\n\nff gg hh", 6, 3, ["aa bb cc\n\ndd ee", "dd ee\n\nff gg hh"]),
        # a piece of exactly `size` tokens is split again, then merged back
        ("one two three four", 4, 1, ["one two three four"]),
        # ". " goes with the split; empty pieces are dropped
        ("It works. It scales, fast. Done", 4, 1, ["It works", "It scales, fast", "Done"]),
        ("x\n\n\n\ny", 5, 0, ["x\n\ny"]),
        # past spaces come single characters
        ("abcdefgh", 1, 0, list("abcdefgh")),
    ],
)
def test_chunks_as_the_reference_splits(
    text: str, size: int, overlap: int, chunks: list[str]
) -> None:
    assert split_recursive(text, size, overlap) == chunks


def test_bad_overlap_names_the_setting() -> None:
    with pytest.raises(InputError, match="generate.ral"):
        split_recursive("text", 100, 100)


def test_real_paper_chunks() -> None:
    """A chunk may pass the size (the window is counted without separators, and after a
    chunk it keeps up to `overlap` tokens whether the next piece fits or not), not by much."""
    text = clean_source(PAPERS / "celerite-scalable-gp", Settings().clean).text
    chunks = split_recursive(text, 1024, 256)
    sizes = [word_tokens(c) for c in chunks]
    assert max(sizes) <= 1.1 * 1024
    # About 22.8k nltk tokens (12.8k whitespace words): ~30 chunks, not the ~17 whitespace
    # words would give.
    assert 25 <= len(chunks) <= 36
