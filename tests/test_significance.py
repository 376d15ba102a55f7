"""tasks/stats.py: bootstrap intervals pinned on known distributions (seeded), the paired
sign-flip test against hand-computed cases and its interval against the test itself (one
rule: within noise when p >= 0.05, exactly when the interval covers zero; no interval below
6 samples), agreement and weighted kappa by hand."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from lilo.tasks.stats import (
    bootstrap_interval,
    exact_agreement,
    fewest_samples,
    paired_comparison,
    sign_flip,
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


def test_below_six_samples_there_is_no_interval() -> None:
    """n too small: the mean alone. Two samples resample into three means, which a
    percentile bootstrap used to report as an interval."""
    assert fewest_samples() == 6  # 2/2^5 = 0.0625 >= 0.05 > 2/2^6
    for n in range(1, 6):
        ci = bootstrap_interval([50.0 + i for i in range(n)])
        assert (ci.n, ci.low, ci.high, ci.too_small) == (n, None, None, True)
        assert ci.covers(-1e9) and ci.covers(1e9)
    six = bootstrap_interval([50.0, 51.0, 52.0, 53.0, 54.0, 55.0])
    assert six.low is not None and six.high is not None and six.low < 52.5 < six.high
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
    # One sample: no interval (n too small), p = 1: within noise.
    single = paired_comparison([59.0], [50.0])
    assert (single.difference.low, single.difference.high, single.p_value) == (None, None, 1.0)
    assert single.within_noise


def _p_by_enumeration(d: np.ndarray) -> float:
    """The sign-flip p-value straight from its definition, every assignment enumerated."""
    observed = abs(d.mean()) - 1e-12
    flips = itertools.product((1.0, -1.0), repeat=len(d))
    return float(np.mean([abs((np.array(s) * d).mean()) >= observed for s in flips]))


def test_within_noise_interval_and_p_are_one_rule() -> None:
    """Demo sizes printed `-83.4 [-83.4, -83.3] p 0.250 within noise: no`: an interval that
    excluded zero beside a test that could not tell. Now the interval is the test's: the
    shifts delta whose differences minus delta the test does not reject, checked here
    against the test run at each delta; zero is in it exactly when p >= 0.05, which is
    `within_noise`; and below 6 pairs there is none."""
    rng = np.random.default_rng(5)
    for trial in range(60):
        n = int(rng.integers(1, 11))
        # whole numbers and tenths: ties among the flips, as scores x100 have
        d = np.round(rng.normal(rng.uniform(-4, 4), 3, size=n), int(trial % 2))
        paired = sign_flip(d)
        ci = paired.difference
        assert paired.p_value == pytest.approx(_p_by_enumeration(d))
        assert paired.within_noise == (paired.p_value >= 0.05) == ci.covers(0.0)
        assert ci.too_small == (n < 6)
        if ci.too_small:
            assert paired.within_noise
            continue
        for delta in np.linspace(ci.low - 2, ci.high + 2, 41):
            if min(abs(delta - ci.low), abs(delta - ci.high)) < 1e-6:
                continue
            assert (_p_by_enumeration(d - delta) >= 0.05) == (ci.low < delta < ci.high)
    # Six differences of one sign: p = 2/64, the fewest that can tell; zero is outside.
    six = sign_flip([3.0, 1.0, 4.0, 1.0, 5.0, 9.0])
    assert six.p_value == pytest.approx(2 / 64) and not six.within_noise
    assert 0.0 < six.difference.low < six.difference.mean < six.difference.high
    # Beyond 16 pairs the flips are drawn (seeded); the rule holds the same.
    many = sign_flip(np.random.default_rng(2).normal(0.8, 3.0, size=40), seed=3)
    assert many.within_noise == (many.p_value >= 0.05) == many.difference.covers(0.0)
    assert sign_flip(np.random.default_rng(2).normal(0.8, 3.0, size=40), seed=3) == many


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


def test_quadratic_kappa_by_hand_with_a_category_no_grader_used() -> None:
    # Categories 0, .5, 1, the middle one never given: quadratic weights 0, .25, 1 by
    # position. Observed: (0,0), (0,1), (1,1), (1,1): weighted disagreement 1/4. Marginals
    # (.5, 0, .5) and (.25, 0, .75): chance .5*.75*1 + .5*.25*1 = .5; kappa 1 - .25/.5.
    a, b = [0.0, 0.0, 1.0, 1.0], [0.0, 1.0, 1.0, 1.0]
    assert weighted_kappa(a, b, (0.0, 0.5, 1.0), power=2) == pytest.approx(0.5)
    # linearly the two grades are a whole scale apart too: the same 0.5
    assert weighted_kappa(a, b, (0.0, 0.5, 1.0)) == pytest.approx(0.5)
    # both graders constant on one grade: chance agrees fully, kappa is 1 (no warning)
    assert weighted_kappa([0.5, 0.5], [0.5, 0.5], (0.0, 0.5, 1.0), power=2) == 1.0
    with pytest.raises(ValueError, match="power is 1"):
        weighted_kappa(a, b, (0.0, 0.5, 1.0), power=3)
