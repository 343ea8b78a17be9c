"""skrbal's log-sum-exp against scipy.special.logsumexp, paired rounds.

Run with::

    OPENBLAS_NUM_THREADS=1 pytest benchmarks/bench_logspace.py --benchmark-only -s

The shapes skrbal sums: a joint log likelihood of 1,000,000 samples and 4
classes (summed over classes, in both memory layouts), and a small batch of
10 samples (the stream learner's case, where per-call overhead dominates).
Target: the in-house helper at most as slow as scipy's (ratio <= 1), which is
why skrbal keeps one of its own.
"""

import numpy as np
import pytest
from _paired import quartiles, repeated, time_paired
from scipy.special import logsumexp as scipy_logsumexp

from skrbal._logspace import logsumexp

ROUNDS = 15
CASES = {
    "1e6x4_C_axis1": ((1_000_000, 4), "C", 1, 15),
    "1e6x4_F_axis1": ((1_000_000, 4), "F", 1, 15),
    "10x4_C_axis1": ((10, 4), "C", 1, 2000),
}

BENCHMARK_RATIOS = [
    (f"logsumexp {name}: skrbal / scipy, paired", f"lse_{name}", None, 1.0, "lower")
    for name in CASES
]


@pytest.mark.parametrize("name", list(CASES))
def test_logsumexp_vs_scipy(benchmark, record_median, name):
    shape, order, axis, calls = CASES[name]
    a = np.asarray(np.random.default_rng(0).normal(scale=50, size=shape), order=order)
    np.testing.assert_allclose(
        logsumexp(a, axis=axis), scipy_logsumexp(a, axis=axis), rtol=1e-12, atol=1e-13
    )
    benchmark.group = "logsumexp, paired"
    ours, scipy_time = time_paired(
        benchmark,
        repeated(logsumexp, calls, a, axis=axis),
        repeated(scipy_logsumexp, calls, a, axis=axis),
        rounds=ROUNDS,
    )
    ratio = ours / scipy_time
    q1, median, q3 = quartiles(ratio)
    print(
        f"\n  {name}: skrbal {np.median(ours) / calls * 1e6:.1f} us, scipy "
        f"{np.median(scipy_time) / calls * 1e6:.1f} us per call; ratio median "
        f"{median:.3f} (IQR {q1:.3f}-{q3:.3f})"
    )
    record_median(f"lse_{name}", seconds=median)
