"""Markov-cluster's pure parts against hand-computed values (docs/design.md §15)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from lilo.tasks.methods._markov import (
    best_path,
    cluster,
    first_appearance,
    kendall_tau,
    transition_matrix,
)
from lilo.tasks.methods._section_writer import budgets, word_chunks

# Chunk labels in document order: 0 2 2 1 0 2 1.
LABELS = [0, 2, 2, 1, 0, 2, 1]


def test_transition_matrix_rows_are_shares_of_next_chunks():
    # 0->2 twice; 1->0 once (its last chunk has no successor); 2->2 once, 2->1 twice
    assert transition_matrix(LABELS, 3) == [
        [0.0, 0.0, 1.0],
        [1.0, 0.0, 0.0],
        [0.0, pytest.approx(2 / 3), pytest.approx(1 / 3)],
    ]
    assert transition_matrix([0, 0], 2) == [[1.0, 0.0], [0.0, 0.0]]  # no successor: zeros


def test_dp_path_maximises_the_product_of_transitions():
    # paths: 1-0-2 = 1 * 1; 0-2-1 = 1 * 2/3; 2-1-0 = 2/3 * 1; the other three pass a 0
    path, exact = best_path(transition_matrix(LABELS, 3), 16)
    assert (path, exact) == ([1, 0, 2], True)
    assert first_appearance(LABELS) == [0, 2, 1]  # not what the DP picks
    # a 4-cluster chain in a scrambled order: the path follows the chain
    chain = [[0, 0, 1, 0], [0, 0, 0, 0], [0, 0, 0, 1], [0, 1, 0, 0]]
    assert best_path(chain, 16) == ([0, 2, 3, 1], True)


def test_dp_agrees_with_brute_force_on_random_matrices():
    from itertools import permutations

    rng = np.random.default_rng(0)
    for n in (2, 4, 6):
        m = rng.random((n, n))
        m = (m / m.sum(axis=1, keepdims=True)).tolist()

        def logp(p, m=m):
            return sum(math.log(m[a][b]) for a, b in zip(p, p[1:], strict=False))

        best = max(permutations(range(n)), key=logp)
        path, exact = best_path(m, 16)
        assert exact and logp(path) == pytest.approx(logp(best))


def test_past_the_size_limit_the_fallback_order_is_used():
    matrix = transition_matrix(LABELS, 3)
    assert best_path(matrix, 2, first_appearance(LABELS)) == ([0, 2, 1], False)
    assert best_path(matrix, 2) == ([0, 1, 2], False)


def test_kendall_tau():
    assert kendall_tau([1, 0, 2], [0, 1, 2]) == pytest.approx(1 / 3)  # 2 agree, 1 not
    assert kendall_tau([0, 1, 2, 3], [0, 1, 2, 3]) == 1.0
    assert kendall_tau([3, 2, 1, 0], [0, 1, 2, 3]) == -1.0


def test_cluster_picks_k_by_silhouette_within_the_chunk_count():
    rng = np.random.default_rng(0)
    centres = np.eye(6)[:3] * 10
    points = np.vstack([c + rng.normal(0, 0.1, (4, 6)) for c in centres])
    labels, k = cluster(points, 2, 6, seed=0)
    assert k == 3 and labels.tolist() == [0] * 4 + [1] * 4 + [2] * 4  # numbered by appearance
    labels, k = cluster(points[:4], 5, 10, seed=0)  # 4 chunks: k in 2..3 only
    assert k in (2, 3)
    assert cluster(points[:2], 5, 10, seed=0)[1] == 2


def test_word_chunks_and_budgets():
    text = " ".join(f"w{i}" for i in range(12))
    chunks = word_chunks([text, "a b"], 5, 1)
    assert [c.text for c in chunks] == ["w0 w1 w2 w3 w4", "w4 w5 w6 w7 w8", "w8 w9 w10 w11", "a b"]
    assert [c.paper for c in chunks] == [1, 1, 1, 2]
    assert budgets(4000, [3, 1, 1]) == [2400, 800, 800]
    assert budgets(10, [1, 1, 1]) == [4, 3, 3] and sum(budgets(8001, [2, 5, 7])) == 8001
