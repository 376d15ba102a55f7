"""The probes' metric and gold placement, against cases computed by hand: SQuAD
normalization (articles, punctuation, unicode), the first-line substring rule, the KV
rule; the gold pair at exactly the asked index, every other pair in its order."""

from __future__ import annotations

import pytest

from lilo.tasks.probes import (
    default_positions,
    format_documents,
    format_kv_records,
    kv_correct,
    normalize_answer,
    place_gold,
    place_kv,
    qa_correct,
)


@pytest.mark.parametrize(
    ("text", "normalized"),
    [
        ("The Beatles", "beatles"),  # article at the start, lower case
        ("a man, a plan, a canal: Panama!", "man plan canal panama"),  # articles + punctuation
        ("Theatre of the Absurd", "theatre of absurd"),  # "the" inside a word stays
        ("An apple an hour", "apple hour"),
        ("U.S.A.", "usa"),  # ASCII punctuation goes, letters join
        ("rock-and-roll", "rockandroll"),  # hyphen is punctuation
        ("  many   spaces\tand\nlines ", "many spaces and lines"),
        ("Wilhelm Conrad Röntgen", "wilhelm conrad röntgen"),  # non-ASCII letters stay
        ("ÉCOLE Normale", "école normale"),  # unicode lower case
        ("1940–1942", "1940–1942"),  # the en dash is not ASCII punctuation: kept
        ("«Le Monde»", "«le monde»"),  # nor are guillemets
        ("the", ""),
        # a combining mark is part of the word, as `regex` (the authors') reads it: "the" + a
        # combining acute is no article, and "a" + a combining diaeresis is the letter ä
        ("the\u0301 a\u0308 house", "the\u0301 a\u0308 house"),
    ],
)
def test_squad_normalization(text, normalized):
    assert normalize_answer(text) == normalized


def test_qa_correct_is_a_substring_of_the_first_line():
    answers = ["Wilhelm Conrad Röntgen"]
    assert qa_correct("It was wilhelm conrad Röntgen, in 1901.", answers)
    assert qa_correct("The answer: Wilhelm-Conrad Röntgen", ["Wilhelm Conrad Röntgen"]) is False
    assert qa_correct("Röntgen", answers) is False  # the gold must lie in the prediction
    # Only the first line counts: copying the context on later lines gains nothing.
    assert qa_correct("I am not sure.\nWilhelm Conrad Röntgen", answers) is False
    assert qa_correct("Paris", ["London", "paris"])  # any of the gold answers
    assert qa_correct("The the the", ["The"])  # an answer that normalizes to nothing


def test_kv_correct_lowercases_without_normalizing():
    value = "bb3ba2a5-7de8-434b-a86e-a88bb9fa7289"
    assert kv_correct(f'The value is "{value.upper()}".', value)
    assert not kv_correct("bb3ba2a57de8434ba86ea88bb9fa7289", value)  # hyphens matter


RECORDS = [(f"k{i}", f"v{i}") for i in range(6)]


@pytest.mark.parametrize("key", ["k0", "k3", "k5"])
@pytest.mark.parametrize("index", [0, 1, 2, 3, 4, 5])
def test_the_gold_pair_lands_at_the_index_and_the_others_keep_their_order(key, index):
    placed = place_kv(RECORDS, key, index)
    assert placed[index] == (key, key.replace("k", "v"))
    others = [r for r in RECORDS if r[0] != key]
    assert [r for i, r in enumerate(placed) if i != index] == others
    assert len(placed) == len(RECORDS)


def test_placement_by_hand():
    assert place_kv(RECORDS, "k4", 1) == [
        ("k0", "v0"), ("k4", "v4"), ("k1", "v1"), ("k2", "v2"), ("k3", "v3"), ("k5", "v5")
    ]  # fmt: skip
    assert place_gold(["d1", "d2", "d3"], "G", 3) == ["d1", "d2", "d3", "G"]
    assert place_gold(["d1", "d2", "d3"], "G", 0) == ["G", "d1", "d2", "d3"]
    with pytest.raises(ValueError, match="outside"):
        place_kv(RECORDS, "k1", 6)
    with pytest.raises(ValueError, match="not once"):
        place_kv(RECORDS, "nope", 0)


def test_default_positions_are_the_papers():
    assert default_positions("kv", 140) == (0, 34, 69, 104, 139)
    assert default_positions("kv", 75) == (0, 24, 49, 74)
    assert default_positions("mdqa", 20) == (0, 4, 9, 14, 19)
    assert default_positions("mdqa", 8) == (0, 1, 3, 5, 7)  # other sizes: quarters and ends


def test_records_and_documents_are_formatted_as_the_repository_does():
    assert format_kv_records([("a", "1"), ("b", "2"), ("c", "3")]) == (
        '{"a": "1",\n "b": "2",\n "c": "3"}'
    )
    docs = [{"title": "T1", "text": "one."}, {"title": "T2", "text": "two."}]
    assert format_documents(docs) == "Document [1](Title: T1) one.\nDocument [2](Title: T2) two."
