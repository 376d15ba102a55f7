"""Statistics that say what a difference between two leaderboard cells means (docs/design.md,
"Scores"): a seeded bootstrap interval over samples, a paired comparison of two methods on
the same samples (the sign-flip test and the interval it gives), and agreement between two
graders (exact and Cohen's weighted kappa). Below `fewest_samples` (6 at 95%) no interval
is given: n too small.

Pure functions of lists of numbers; every random draw comes from `numpy.random.default_rng`
with the seed given, so the same inputs always give the same interval and p-value.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

__all__ = [
    "LEVEL",
    "Interval",
    "Paired",
    "bootstrap_interval",
    "exact_agreement",
    "fewest_samples",
    "paired_comparison",
    "sign_flip",
    "sign_flip_p",
    "weighted_kappa",
]

LEVEL = 0.95
RESAMPLES = 2000
# Up to this many pairs the sign-flip test enumerates every flip (2^n); above, it draws.
_EXACT_UP_TO = 16


def fewest_samples(level: float = LEVEL) -> int:
    """The fewest samples an interval is given for (6 at 95%). Over n pairs the sign-flip
    test's smallest p is 2 / 2^n (every difference of one sign): with fewer than this it
    cannot tell any difference from noise, its interval is the whole line, and a bootstrap
    over so few samples has a handful of distinct resamples. Below it: "n too small"."""
    n = 1
    while 2.0 / 2**n >= 1.0 - level:
        n += 1
    return n


@dataclass(frozen=True)
class Interval:
    """A mean over `n` samples and its interval at `level`; `low` and `high` are None when
    n is too small for one (`fewest_samples`): an interval that covers every value."""

    n: int
    mean: float
    low: float | None
    high: float | None
    level: float = LEVEL

    @property
    def too_small(self) -> bool:
        return self.low is None or self.high is None

    def covers(self, value: float) -> bool:
        if self.low is None or self.high is None:
            return True
        return self.low <= value <= self.high


@dataclass(frozen=True)
class Paired:
    """Method minus reference on the samples both scored: the mean paired difference, the
    two-sided sign-flip p-value, and the interval of the shifts that test does not reject.
    One rule decides `within_noise`: p >= 1 - level, the test cannot tell the two apart;
    the interval covers zero exactly then (it is the test's own), and with fewer samples
    than `fewest_samples` it is no interval ("n too small") and the difference is always
    within noise."""

    difference: Interval
    p_value: float

    @property
    def within_noise(self) -> bool:
        return self.p_value >= 1.0 - self.difference.level


def bootstrap_interval(
    values: Sequence[float], *, seed: int = 0, resamples: int = RESAMPLES, level: float = LEVEL
) -> Interval:
    """Resample the values (one per sample) with replacement `resamples` times; the interval
    is the (1-level)/2 and (1+level)/2 quantiles of the resampled means. Fewer values than
    `fewest_samples`: the mean alone (n too small); none: ValueError."""
    x = np.asarray(values, dtype=float)
    if x.size == 0:
        raise ValueError("an interval needs at least one value")
    mean = float(x.mean())
    if x.size < fewest_samples(level):
        return Interval(int(x.size), mean, None, None, level)
    rng = np.random.default_rng(seed)
    means = x[rng.integers(0, x.size, size=(resamples, x.size))].mean(axis=1)
    tail = (1.0 - level) / 2.0
    low, high = np.quantile(means, [tail, 1.0 - tail])
    return Interval(int(x.size), mean, float(low), float(high), level)


def sign_flip(
    differences: Sequence[float], *, level: float = LEVEL, seed: int = 0, draws: int = 20_000
) -> Paired:
    """Two-sided paired permutation test of "no difference" and its inversion.

    Under no difference each paired difference is as likely positive as negative; p is the
    share of sign assignments whose mean is at least as far from zero as the observed one:
    exact (all 2^n) up to 16 pairs, else `draws` seeded random assignments (the observed one
    counted, so p > 0). The interval holds every shift delta for which the same test on the
    differences minus delta has p >= 1 - level. Each assignment s counts for a shift up to
    a distance from the mean read off in closed form (|c - t b| >= n t, c and b below), so
    the bounds are exact for the assignments used, and zero lies in the interval exactly
    when p >= 1 - level."""
    d = np.asarray(differences, dtype=float)
    if d.size == 0:
        raise ValueError("a paired test needs at least one pair")
    n, mean = d.size, float(d.mean())
    exact = n <= _EXACT_UP_TO
    if exact:
        signs = 1.0 - 2.0 * ((np.arange(2**n)[:, None] >> np.arange(n)) & 1)
    else:
        signs = np.random.default_rng(seed).choice((1.0, -1.0), size=(draws, n))
    b = signs.sum(axis=1)
    c = signs @ (d - mean)
    same = np.abs(b) == n  # every sign alike: as extreme as the observed at any shift
    with np.errstate(divide="ignore", invalid="ignore"):
        above = np.where(same, np.inf, np.abs(c) / (n + b * np.sign(c)))
        below = np.where(same, np.inf, np.abs(c) / (n - b * np.sign(c)))

    def p_of(count: int) -> float:
        return count / len(signs) if exact else (count + 1) / (len(signs) + 1)

    tol = 1e-9 * max(1.0, float(np.abs(d).max()))
    toward_zero = below if mean > 0 else above
    p = p_of(int(np.sum(toward_zero >= abs(mean) - tol)))
    needed = next(k for k in range(len(signs) + 2) if p_of(k) >= 1.0 - level)
    reach = []
    for side in (below, above):
        t = float(np.sort(side)[::-1][needed - 1]) if needed else np.inf
        if side is toward_zero and t >= abs(mean) - tol:
            t = max(t, abs(mean))  # a tie: the bound is zero itself
        reach.append(t)
    if np.isinf(reach).any():
        return Paired(Interval(n, mean, None, None, level), p)
    return Paired(Interval(n, mean, mean - reach[0], mean + reach[1], level), p)


def sign_flip_p(differences: Sequence[float], *, seed: int = 0, draws: int = 20_000) -> float:
    """The sign-flip test's two-sided p-value (`sign_flip`)."""
    return sign_flip(differences, seed=seed, draws=draws).p_value


def paired_comparison(
    method: Sequence[float], reference: Sequence[float], *, seed: int = 0
) -> Paired:
    """`method[i]` and `reference[i]` are the two scores of sample i."""
    if len(method) != len(reference):
        raise ValueError(f"unpaired: {len(method)} method scores, {len(reference)} reference")
    d = [float(a) - float(b) for a, b in zip(method, reference, strict=True)]
    return sign_flip(d, seed=seed)


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
    graders agree perfectly and chance would not (both constant on one grade: 1 too).
    sklearn's `cohen_kappa_score` computes it on the grades' positions in `categories`: it
    takes grades such as 0.5 for continuous values, not classes, and `labels` keeps a
    category no grader used in the weights; its warning where chance agreement is total (the
    1 above) is silenced."""
    from sklearn.exceptions import UndefinedMetricWarning
    from sklearn.metrics import cohen_kappa_score

    if len(a) != len(b) or not a:
        raise ValueError("kappa needs two equally long, non-empty lists of grades")
    if power not in (1, 2):
        raise ValueError(f"kappa's power is 1 (linear) or 2 (quadratic), not {power}")
    index = {c: i for i, c in enumerate(categories)}
    unknown = sorted({g for g in (*a, *b) if g not in index})
    if unknown:
        raise ValueError(f"grades {unknown} are not among the categories {list(categories)}")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UndefinedMetricWarning)
        kappa = cohen_kappa_score(
            [index[x] for x in a],
            [index[y] for y in b],
            labels=list(range(len(categories))),
            weights="linear" if power == 1 else "quadratic",
            replace_undefined_by=1.0,
        )
    return float(kappa)
