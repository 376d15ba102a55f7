"""Statistics that say what a difference between two leaderboard cells means (docs/design.md,
"Scores"): a seeded bootstrap interval over samples, a paired comparison of two methods on
the same samples, and agreement between two graders (exact and Cohen's weighted kappa).

Pure functions of lists of numbers; every random draw comes from `numpy.random.default_rng`
with the seed given, so the same inputs always give the same interval and p-value.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

__all__ = [
    "Interval",
    "Paired",
    "bootstrap_interval",
    "exact_agreement",
    "paired_comparison",
    "sign_flip_p",
    "weighted_kappa",
]

RESAMPLES = 2000
# Up to this many pairs the sign-flip test enumerates every flip (2^n); above, it draws.
_EXACT_UP_TO = 16


@dataclass(frozen=True)
class Interval:
    """A mean over `n` samples and its percentile bootstrap interval at `level`."""

    n: int
    mean: float
    low: float
    high: float
    level: float = 0.95

    def covers(self, value: float) -> bool:
        return self.low <= value <= self.high


@dataclass(frozen=True)
class Paired:
    """Method minus reference on the samples both scored: the mean paired difference, its
    bootstrap interval and the two-sided sign-flip p-value. `within_noise`: the interval
    covers zero, or there is a single pair (its zero-width interval says nothing about
    noise), so the data cannot tell the two apart."""

    difference: Interval
    p_value: float

    @property
    def within_noise(self) -> bool:
        return self.difference.n < 2 or self.difference.covers(0.0)


def bootstrap_interval(
    values: Sequence[float], *, seed: int = 0, resamples: int = RESAMPLES, level: float = 0.95
) -> Interval:
    """Resample the values (one per sample) with replacement `resamples` times; the interval
    is the (1-level)/2 and (1+level)/2 quantiles of the resampled means. One value: a
    zero-width interval; none: ValueError."""
    x = np.asarray(values, dtype=float)
    if x.size == 0:
        raise ValueError("an interval needs at least one value")
    mean = float(x.mean())
    if x.size == 1:
        return Interval(1, mean, mean, mean, level)
    rng = np.random.default_rng(seed)
    means = x[rng.integers(0, x.size, size=(resamples, x.size))].mean(axis=1)
    tail = (1.0 - level) / 2.0
    low, high = np.quantile(means, [tail, 1.0 - tail])
    return Interval(int(x.size), mean, float(low), float(high), level)


def sign_flip_p(differences: Sequence[float], *, seed: int = 0, draws: int = 20_000) -> float:
    """Two-sided paired permutation test: under "no difference" each paired difference is
    as likely positive as negative; p is the share of sign assignments whose mean is at
    least as far from zero as the observed one. Exact (all 2^n) up to 16 pairs, else
    `draws` seeded random assignments (the observed one counted, so p > 0)."""
    d = np.asarray(differences, dtype=float)
    if d.size == 0:
        raise ValueError("a paired test needs at least one pair")
    observed = abs(d.mean()) - 1e-12
    if d.size <= _EXACT_UP_TO:
        signs = np.array(list(itertools.product((1.0, -1.0), repeat=d.size)))
        return float(np.mean(np.abs(signs @ d / d.size) >= observed))
    rng = np.random.default_rng(seed)
    signs = rng.choice((1.0, -1.0), size=(draws, d.size))
    extreme = int(np.sum(np.abs(signs @ d / d.size) >= observed))
    return (extreme + 1) / (draws + 1)


def paired_comparison(
    method: Sequence[float], reference: Sequence[float], *, seed: int = 0
) -> Paired:
    """`method[i]` and `reference[i]` are the two scores of sample i."""
    if len(method) != len(reference):
        raise ValueError(f"unpaired: {len(method)} method scores, {len(reference)} reference")
    d = [float(a) - float(b) for a, b in zip(method, reference, strict=True)]
    return Paired(bootstrap_interval(d, seed=seed), sign_flip_p(d, seed=seed))


def exact_agreement(a: Sequence[float], b: Sequence[float]) -> float:
    """The share of items both graders gave the same grade."""
    if len(a) != len(b) or not a:
        raise ValueError("agreement needs two equally long, non-empty lists of grades")
    return sum(x == y for x, y in zip(a, b, strict=True)) / len(a)


def weighted_kappa(
    a: Sequence[float], b: Sequence[float], categories: Sequence[float], *, power: int = 1
) -> float:
    """Cohen's weighted kappa over ordered `categories`: 1 - sum(w*O)/sum(w*E), with
    disagreement weights w_ij = (|i-j|/(k-1))^power (1: linear, 2: quadratic), O the observed
    and E the chance (product of the two graders' marginals) joint proportions. 1 when the
    graders agree perfectly and chance would not (both constant on one grade: 1 too)."""
    if len(a) != len(b) or not a:
        raise ValueError("kappa needs two equally long, non-empty lists of grades")
    index = {c: i for i, c in enumerate(categories)}
    unknown = sorted({g for g in (*a, *b) if g not in index})
    if unknown:
        raise ValueError(f"grades {unknown} are not among the categories {list(categories)}")
    k = len(categories)
    observed = np.zeros((k, k))
    for x, y in zip(a, b, strict=True):
        observed[index[x], index[y]] += 1
    observed /= observed.sum()
    chance = np.outer(observed.sum(axis=1), observed.sum(axis=0))
    i, j = np.indices((k, k))
    weights = (np.abs(i - j) / max(k - 1, 1)) ** power
    expected = float((weights * chance).sum())
    if expected == 0.0:
        return 1.0
    return 1.0 - float((weights * observed).sum()) / expected
