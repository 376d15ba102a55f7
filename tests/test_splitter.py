"""RAL-Writer's recursive splitter, counting nltk word tokens as the reference does."""

from __future__ import annotations

import pytest
from conftest import PAPERS
from nltk.tokenize import NLTKWordTokenizer

from tasks.clean.latex import clean_source
from tasks.config import Settings
from tasks.methods._splitter import split_recursive, word_tokens


# Each count is `len(nltk.word_tokenize(text))` with real punkt data (checked with
# bench/embedding_fidelity.py's exact counter), except where marked.
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
        # punkt knows "Dr." and "vs." as abbreviations (9 and 6 tokens); lilo's regex splits.
        ("Dr. Smith went home. He was tired.", 10),
        ("Compare a vs. b here.", 7),
    ],
)
def test_word_tokens_literal_cases(text: str, tokens: int) -> None:
    assert word_tokens(text) == tokens


def test_word_tokens_is_treebank_per_sentence() -> None:
    text = "First sentence here. Second one? Third!\n\nA new paragraph (with brackets)."
    treebank = NLTKWordTokenizer()
    sentences = [
        "First sentence here.",
        "Second one?",
        "Third!",
        "A new paragraph (with brackets).",
    ]
    assert word_tokens(text) == sum(len(treebank.tokenize(s)) for s in sentences)


def test_separators_add_their_tokens() -> None:
    # The merge sums piece counts: joining must add exactly what the separator adds.
    pieces = ["alpha beta", "gamma delta", "epsilon"]
    for separator in ["\n\n", "\n", ". ", ", ", " "]:
        joined = separator.join(pieces)
        extra = 1 if separator.strip() else 0
        assert word_tokens(joined) == sum(map(word_tokens, pieces)) + extra * 2


def test_chunks_respect_size_and_overlap() -> None:
    paragraphs = [" ".join(f"w{p}x{i}" for i in range(90)) + "." for p in range(30)]
    chunks = split_recursive("\n\n".join(paragraphs), 300, 100)
    assert all(word_tokens(c) <= 300 for c in chunks)
    for before, after in zip(chunks, chunks[1:], strict=False):
        shared = set(before.split("\n\n")) & set(after.split("\n\n"))
        assert shared and sum(word_tokens(p) for p in shared) <= 100
    assert "\n\n".join(paragraphs).endswith(chunks[-1])


def test_a_piece_too_long_for_any_separator_stays_whole() -> None:
    blob = ",".join(["x"] * 50)  # 99 tokens and no separator inside
    assert split_recursive(f"intro.\n\n{blob}", 10, 2) == ["intro.", blob]


def test_bad_overlap_names_the_setting() -> None:
    with pytest.raises(ValueError, match="generate.ral"):
        split_recursive("text", 100, 100)


def test_real_paper_chunks_fit_when_recounted() -> None:
    """Summing each piece's tokens (never re-tokenizing a window) must not let a chunk grow
    past the size when the chunk itself is counted."""
    text = clean_source(PAPERS / "celerite-scalable-gp", Settings()).text
    chunks = split_recursive(text, 1024, 256)
    sizes = [word_tokens(c) for c in chunks]
    assert max(sizes) <= 1024
    # About 22.8k nltk tokens (12.8k whitespace words): ~30 chunks, not the ~17 whitespace
    # words would give.
    assert 25 <= len(chunks) <= 36
