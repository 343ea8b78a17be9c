"""Per-call overhead of DecisionProcess on small batches of beliefs.

Run with ``pytest benchmarks/bench_decision.py --benchmark-only``; the ratios
are printed at the end (see ``benchmarks/conftest.py``).

The stream learner asks the process about one belief at a time, so what it
pays per call is the process's fixed cost (validating its tables, mapping the
belief's columns), not the arithmetic. The peer is that arithmetic alone: the
same EVPI and optimal action written with plain NumPy on a precomputed
``Q`` table, timed in alternating (paired) rounds with skrbal in one run. The
overhead per call is ``skrbal - plain``; the ratio ``skrbal / plain`` is
reported with its median over rounds and its spread (interquartile range).
BLAS runs single-threaded (``SKRBAL_BENCH_BLAS_THREADS`` overrides it).
"""

import numpy as np
import pytest
from _paired import quartiles, repeated, time_paired

from skrbal import synthetic_decision_process

ROUNDS = 200
CALLS_PER_ROUND = 50

# The stream learner's budget is 0.1 ms of overhead per inspection, for all
# of its work; the process may take a tenth of it.
BENCHMARK_RATIOS = [
    (
        f"{method} on {n} belief(s): overhead per call in us (skrbal - plain)",
        f"{method}_{n}_overhead_us",
        None,
        10.0,
        "lower",
    )
    for method in ("evpi", "optimal_action")
    for n in (1, 10)
] + [
    (
        f"{method} on {n} belief(s): skrbal / plain NumPy, paired",
        f"{method}_{n}",
        None,
        6.0,
        "lower",
    )
    for method in ("evpi", "optimal_action")
    for n in (1, 10)
]


def _plain(process):
    """EVPI and optimal action with nothing but the arithmetic."""
    q = np.asarray(process.state_action_utility)
    best = q.max(axis=1)

    def evpi(proba):
        return proba @ best - (proba @ q).max(axis=1)

    def action(proba):
        return np.argmax(proba @ q, axis=1)

    return evpi, action


def _paired_ratio(benchmark, record_median, name, ours, peer, proba):
    skrbal_time, plain_time = (
        seconds / CALLS_PER_ROUND
        for seconds in time_paired(
            benchmark,
            repeated(ours, CALLS_PER_ROUND, proba),
            repeated(peer, CALLS_PER_ROUND, proba),
            rounds=ROUNDS,
            warmup_rounds=5,
        )
    )
    ratio = skrbal_time / plain_time
    q1, median, q3 = quartiles(ratio)
    overhead = np.median(skrbal_time - plain_time)
    print(
        f"\n  skrbal {np.median(skrbal_time) * 1e6:.1f} us, plain "
        f"{np.median(plain_time) * 1e6:.1f} us, overhead {overhead * 1e6:.1f} us "
        f"per call; ratio median {median:.2f} (IQR {q1:.2f}-{q3:.2f})"
    )
    record_median(name, seconds=median)
    record_median(f"{name}_overhead_us", seconds=overhead * 1e6)


@pytest.mark.parametrize("n", [1, 10])
def test_evpi_small_batch(benchmark, record_median, n):
    benchmark.group = "decision process, per call"
    process = synthetic_decision_process()
    proba = np.random.default_rng(0).dirichlet(np.ones(4), size=n)
    evpi, _ = _plain(process)
    np.testing.assert_allclose(process.evpi(proba), evpi(proba), atol=1e-12)
    _paired_ratio(benchmark, record_median, f"evpi_{n}", process.evpi, evpi, proba)


@pytest.mark.parametrize("n", [1, 10])
def test_optimal_action_small_batch(benchmark, record_median, n):
    benchmark.group = "decision process, per call"
    process = synthetic_decision_process()
    proba = np.random.default_rng(0).dirichlet(np.ones(4), size=n)
    _, action = _plain(process)
    np.testing.assert_array_equal(process.optimal_action(proba), action(proba))
    _paired_ratio(
        benchmark,
        record_median,
        f"optimal_action_{n}",
        process.optimal_action,
        action,
        proba,
    )
