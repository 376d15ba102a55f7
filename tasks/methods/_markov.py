"""Markov-cluster's pure parts (docs/design.md §15): K-Means++ with k chosen by silhouette, the
cluster-to-cluster transition matrix of the chunks' document order, and the
maximum-probability Hamiltonian path over clusters by exact bitmask DP."""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

__all__ = ["best_path", "cluster", "first_appearance", "kendall_tau", "transition_matrix"]


def cluster(vectors: np.ndarray, k_min: int, k_max: int, seed: int) -> tuple[np.ndarray, int]:
    """Labels by K-Means++ for the k in k_min..k_max with the best silhouette (ties: the
    smaller k). Silhouette needs 2 <= k < n, so the range is bounded by the chunk count;
    fewer than 3 chunks make one cluster each."""
    from sklearn.cluster import KMeans  # 2 s to import: only when a method clusters
    from sklearn.metrics import silhouette_score

    n = len(vectors)
    if n < 3:
        return np.arange(n), n
    best: tuple[float, int, np.ndarray] | None = None
    for k in range(max(2, min(k_min, n - 1)), min(k_max, n - 1) + 1):
        labels = KMeans(k, init="k-means++", n_init=10, random_state=seed).fit_predict(vectors)
        score = float(silhouette_score(vectors, labels)) if len(set(labels)) > 1 else -1.0
        if best is None or score > best[0]:
            best = (score, k, labels)
    assert best is not None
    return _renumber(best[2]), best[1]


def _renumber(labels: np.ndarray) -> np.ndarray:
    """Clusters numbered by first appearance in document order, so ids are stable."""
    order = {c: i for i, c in enumerate(dict.fromkeys(labels.tolist()))}
    return np.array([order[c] for c in labels.tolist()])


def transition_matrix(labels: Sequence[int], n: int) -> list[list[float]]:
    """P[a][b]: the share of cluster a's chunks whose next chunk (document order) is in b;
    self-transitions count. A row with no successor stays all zero."""
    counts = [[0] * n for _ in range(n)]
    for a, b in zip(labels, labels[1:], strict=False):
        counts[a][b] += 1
    return [[c / sum(row) if sum(row) else 0.0 for c in row] for row in counts]


def first_appearance(labels: Sequence[int]) -> list[int]:
    return list(dict.fromkeys(labels))


def best_path(
    matrix: Sequence[Sequence[float]], limit: int, fallback: Sequence[int] | None = None
) -> tuple[list[int], bool]:
    """The Hamiltonian path maximising the product of transition probabilities, by bitmask
    DP over log-probabilities (O(n^2 2^n)); ties are broken towards lower cluster ids.
    A zero probability counts as 1e-9 so every order stays comparable. Past `limit`
    clusters: `fallback` (or 0..n-1) and False."""
    n = len(matrix)
    if n > limit:
        return list(fallback if fallback is not None else range(n)), False
    if n <= 1:
        return list(range(n)), True
    w = [[math.log(max(matrix[a][b], 1e-9)) for b in range(n)] for a in range(n)]
    full = (1 << n) - 1
    # score[mask][end]: best log-probability of a path over `mask` ending at `end`
    score = [[-math.inf] * n for _ in range(1 << n)]
    prev = [[-1] * n for _ in range(1 << n)]
    for v in range(n):
        score[1 << v][v] = 0.0
    for mask in range(1, full + 1):
        for end in range(n):
            here = score[mask][end]
            if here == -math.inf:
                continue
            for nxt in range(n):
                if mask >> nxt & 1:
                    continue
                cand, m2 = here + w[end][nxt], mask | 1 << nxt
                if cand > score[m2][nxt] + 1e-12:
                    score[m2][nxt], prev[m2][nxt] = cand, end
    paths = []
    for end in range(n):
        path, mask, v = [], full, end
        while v != -1:
            path.append(v)
            v, mask = prev[mask][v], mask ^ (1 << v)
        paths.append((-round(score[full][end], 9), path[::-1]))
    return min(paths)[1], True


def kendall_tau(order: Sequence[int], reference: Sequence[int]) -> float:
    """Kendall's tau-a between two orders of the same items (1: same order, -1: reversed)."""
    rank = {item: i for i, item in enumerate(reference)}
    seq = [rank[item] for item in order]
    n = len(seq)
    if n < 2:
        return 1.0
    signs = [(seq[j] > seq[i]) - (seq[j] < seq[i]) for i in range(n) for j in range(i + 1, n)]
    return sum(signs) / (n * (n - 1) / 2)
