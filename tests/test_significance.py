"""tasks/stats.py: bootstrap intervals pinned on known distributions (seeded), the paired
sign-flip test against hand-computed cases, agreement and weighted kappa by hand."""

from __future__ import annotations

import numpy as np
import pytest

from lilo.tasks.stats import (
    bootstrap_interval,
    exact_agreement,
    paired_comparison,
    sign_flip_p,
    weighted_kappa,
)


def test_bootstrap_interval_matches_the_normal_theory_on_a_known_distribution() -> None:
    x = np.random.default_rng(1).normal(10.0, 2.0, size=400)
    ci = bootstrap_interval(x, seed=7)
    half = 1.96 * 2.0 / np.sqrt(400)  # sigma / sqrt(n): 0.196
    assert ci.n == 400 and ci.mean == pytest.approx(x.mean())
    assert ci.covers(10.0)
    assert (ci.high - ci.low) / 2 == pytest.approx(half, rel=0.15)
    assert bootstrap_interval(x, seed=7) == ci  # seeded: the same interval again
    assert bootstrap_interval(x, seed=8) != ci


def test_bootstrap_interval_covers_the_true_mean_about_95_percent_of_the_time() -> None:
    rng = np.random.default_rng(3)
    covered = [
        bootstrap_interval(rng.exponential(1.0, size=60), seed=i, resamples=1000).covers(1.0)
        for i in range(200)
    ]
    assert 0.88 <= np.mean(covered) <= 0.98


def test_degenerate_inputs() -> None:
    assert bootstrap_interval([5.0]).low == bootstrap_interval([5.0]).high == 5.0
    with pytest.raises(ValueError, match="at least one"):
        bootstrap_interval([])


def test_sign_flip_p_by_hand() -> None:
    # d = 1, 2, 3: of the 8 sign assignments only +++ and --- reach |mean| 2: p = 2/8.
    assert sign_flip_p([1.0, 2.0, 3.0]) == pytest.approx(0.25)
    # d = 1, -1, 2, 0: observed |sum| 2; the 16 assignments of +-1 +-1 +-2 +-0 whose |sum|
    # reaches 2: all but the 4 with sum 0 (+1 +1 -2, -1 -1 +2, each with +-0): p = 12/16.
    sums = [abs(a + b + 2 * c) for a in (1, -1) for b in (1, -1) for c in (1, -1) for _ in (1, -1)]
    assert np.mean([s >= 2 for s in sums]) == 0.75
    assert sign_flip_p([1.0, -1.0, 2.0, 0.0]) == pytest.approx(0.75)
    assert sign_flip_p([0.0, 0.0]) == 1.0


def test_paired_comparison_marks_a_difference_within_noise() -> None:
    rng = np.random.default_rng(0)
    reference = rng.uniform(40, 60, size=30)
    clear = paired_comparison(reference + 5 + rng.normal(0, 1, 30), reference)
    assert clear.difference.mean == pytest.approx(5, abs=0.5)
    assert not clear.within_noise and clear.p_value < 0.001
    noise = paired_comparison(reference + rng.normal(0, 3, 30), reference)
    assert noise.within_noise and noise.p_value > 0.05
    with pytest.raises(ValueError, match="unpaired"):
        paired_comparison([1.0], [1.0, 2.0])
    # One sample: a zero-width interval at +9 that "excludes" zero, p = 1: within noise.
    single = paired_comparison([59.0], [50.0])
    assert (single.difference.low, single.difference.high, single.p_value) == (9.0, 9.0, 1.0)
    assert single.within_noise


def test_agreement_and_weighted_kappa_by_hand() -> None:
    humans = [0.0, 0.5, 1.0, 1.0]
    judge = [0.0, 1.0, 1.0, 0.5]
    assert exact_agreement(humans, judge) == 0.5
    # Linear weights 0, .5, 1; observed weighted disagreement .25; chance, from the
    # marginals (.25, .25, .5) both ways: 2(.5*.0625 + 1*.125 + .5*.125) = .4375.
    assert weighted_kappa(humans, judge, (0.0, 0.5, 1.0)) == pytest.approx(1 - 0.25 / 0.4375)
    assert weighted_kappa(humans, humans, (0.0, 0.5, 1.0)) == 1.0
    # Two categories: weighted kappa is Cohen's plain kappa. Observed disagreement .25;
    # chance .5 * .75 + .5 * .25 = .5; kappa = 1 - .25/.5.
    assert weighted_kappa([0, 0, 1, 1], [0, 1, 1, 1], (0, 1)) == pytest.approx(0.5)
    with pytest.raises(ValueError, match="not among"):
        weighted_kappa([0.3], [0.0], (0.0, 1.0))
