"""Timing and memory of latent health-state smoothing against hmmlearn.

Run with ``pytest benchmarks/bench_smoothing.py --benchmark-only -s``; the
ratios and their targets are printed at the end (see ``benchmarks/conftest.py``),
the spread of the paired rounds as each benchmark finishes.

The peer is hmmlearn's compiled log-space forward-backward: the route of
``BaseHMM.score_samples`` with ``implementation="log"`` (``_hmmc.forward_log``,
``_hmmc.backward_log`` and the posterior normalisation), called without its
input validation, on a model whose "observations" are the log emission matrix
itself. Four states, 100,000 and 1,000,000 steps, log densities near ``-1e3``.
skrbal smooths the same problem (a single action, uniform start one step
before the first observation, no end anchor) and, on the same emissions, the
synthetic decision process with random actions and both ends anchored, which
hmmlearn cannot express. Targets (issue 14): at most 3x hmmlearn's time, at
most its peak memory. Viterbi is timed against the same forward-backward and,
for information, against hmmlearn's compiled Viterbi.

Both sides run in alternation (paired rounds) and the median of the per-round
ratios is reported with its spread; BLAS runs single-threaded
(``SKRBAL_BENCH_BLAS_THREADS`` overrides it). Peak memory is traced with
``tracemalloc`` (numpy reports its buffers to it) in a fresh subprocess per
method, inputs excluded, against hmmlearn's core (above) and against its
public ``score_samples``, which adds input validation.
"""

import json
import os
import subprocess
import sys
import textwrap
import time

import numpy as np
import pytest
from hmmlearn import _hmmc
from hmmlearn.base import BaseHMM

from skrbal import synthetic_decision_process
from skrbal.smoothing import forward_backward, viterbi

N_STATES = 4
SIZES = {"1e5": 100_000, "1e6": 1_000_000}
ROUNDS = {"1e5": 9, "1e6": 5}
SYNTHETIC_TRANSITION = np.asarray(synthetic_decision_process().transition, float)

BENCHMARK_RATIOS = []
for _size in SIZES:
    for _what, _key in [
        ("forward_backward", "fb"),
        ("forward_backward, actions and anchors", "fb_actions"),
        ("viterbi, actions and anchors", "viterbi"),
    ]:
        BENCHMARK_RATIOS.append(
            (
                f"{_what} {_size} steps / hmmlearn forward-backward, paired",
                f"{_key}_{_size}",
                None,
                3.0,
                "lower",
            )
        )
    BENCHMARK_RATIOS.append(
        (
            f"viterbi {_size} steps / hmmlearn viterbi, paired",
            f"viterbi_vs_hmm_{_size}",
            None,
            3.0,
            "lower",
        )
    )
    for _what, _key in [("forward_backward", "fb"), ("with actions", "fb_actions")]:
        for _peer, _prefix in [("core", "memory"), ("score_samples", "memory_api")]:
            BENCHMARK_RATIOS.append(
                (
                    f"peak memory {_what} {_size} steps / hmmlearn {_peer}",
                    f"{_prefix}_{_key}_{_size}",
                    None,
                    1.0,
                    "lower",
                )
            )


def _problem(n_steps, seed=0):
    rng = np.random.default_rng(seed)
    log_emission = -1e3 + 10.0 * rng.normal(size=(n_steps, N_STATES))
    transmat = rng.dirichlet(np.ones(N_STATES), size=N_STATES)
    actions = rng.integers(0, 2, n_steps + 1)
    actions[-1] = 1  # a repair into the end inspection: any end is reachable
    return log_emission, transmat, actions


def _hmmlearn_forward_backward(log_emission, transmat):
    """hmmlearn's ``_score_log`` with posteriors, minus input validation."""
    startprob = np.full(N_STATES, 1.0 / N_STATES) @ transmat
    log_prob, forward = _hmmc.forward_log(startprob, transmat, log_emission)
    backward = _hmmc.backward_log(startprob, transmat, log_emission)
    log_gamma = forward + backward
    log_gamma -= log_gamma.max(axis=1, keepdims=True)
    with np.errstate(under="ignore"):
        posteriors = np.exp(log_gamma)
    posteriors /= posteriors.sum(axis=1, keepdims=True)
    return log_prob, posteriors


class _FixedEmissionHMM(BaseHMM):
    """hmmlearn HMM whose "observations" are the log emission matrix itself."""

    def _compute_log_likelihood(self, X):
        return X

    def _get_n_fit_scalars_per_param(self):
        return {}

    def _init(self, X, lengths=None):
        pass

    def _check(self):
        pass

    def _generate_sample_from_state(self, state, random_state=None):
        raise NotImplementedError


def _hmmlearn_score_samples(log_emission, transmat):
    """hmmlearn's public route, input validation included."""
    model = _FixedEmissionHMM(n_components=N_STATES, implementation="log")
    model.startprob_ = np.full(N_STATES, 1.0 / N_STATES) @ transmat
    model.transmat_ = transmat
    return model.score_samples(log_emission)


def _hmmlearn_viterbi(log_emission, transmat):
    startprob = np.full(N_STATES, 1.0 / N_STATES) @ transmat
    return _hmmc.viterbi(startprob, transmat, log_emission)


def _skrbal_calls(log_emission, transmat, actions):
    return {
        "fb": lambda: forward_backward(log_emission, transmat),
        "fb_actions": lambda: forward_backward(
            log_emission, SYNTHETIC_TRANSITION, actions, start=0, end=2
        ),
        "viterbi": lambda: viterbi(
            log_emission, SYNTHETIC_TRANSITION, actions, start=0, end=2
        ),
    }


def _paired(ours, peer, rounds):
    ratios = []
    for _ in range(rounds + 1):  # the first round warms up
        start = time.perf_counter()
        ours()
        middle = time.perf_counter()
        peer()
        ratios.append((middle - start) / (time.perf_counter() - middle))
    return np.array(ratios[1:])


def _report(label, ratios):
    q1, median, q3 = np.percentile(ratios, [25, 50, 75])
    sys.stdout.write(
        f"\n{label}: median ratio {median:.2f} (IQR {q1:.2f}-{q3:.2f}, "
        f"min {ratios.min():.2f}, max {ratios.max():.2f}, {len(ratios)} rounds)\n"
    )
    return median


@pytest.mark.parametrize("size", list(SIZES))
def test_agrees_with_hmmlearn(size):
    # The timed problems are the same problem on both sides.
    log_emission, transmat, _ = _problem(SIZES[size])
    log_prob, posteriors = _hmmlearn_forward_backward(log_emission, transmat)
    result = forward_backward(log_emission, transmat)
    # hmmlearn's lattice runs to -1e3 * n_steps: its own rounding is ~1e-9.
    np.testing.assert_allclose(result.marginals, posteriors, rtol=0, atol=1e-6)
    assert result.log_likelihood == pytest.approx(log_prob, rel=1e-9)


@pytest.mark.parametrize("size", list(SIZES))
@pytest.mark.parametrize("method", ["fb", "fb_actions", "viterbi"])
def test_time_against_hmmlearn_forward_backward(benchmark, record_median, size, method):
    benchmark.group = f"smoothing {size} steps, paired with hmmlearn"
    log_emission, transmat, actions = _problem(SIZES[size])
    ours = _skrbal_calls(log_emission, transmat, actions)[method]
    ratios = benchmark.pedantic(
        _paired,
        args=(ours, lambda: _hmmlearn_forward_backward(log_emission, transmat)),
        kwargs={"rounds": ROUNDS[size]},
        rounds=1,
        iterations=1,
    )
    record_median(
        f"{method}_{size}", seconds=_report(f"{method} {size} / hmmlearn FB", ratios)
    )


@pytest.mark.parametrize("size", list(SIZES))
def test_viterbi_against_hmmlearn_viterbi(benchmark, record_median, size):
    benchmark.group = f"smoothing {size} steps, paired with hmmlearn"
    log_emission, transmat, _ = _problem(SIZES[size])
    ratios = benchmark.pedantic(
        _paired,
        args=(
            lambda: viterbi(log_emission, transmat),
            lambda: _hmmlearn_viterbi(log_emission, transmat),
        ),
        kwargs={"rounds": ROUNDS[size]},
        rounds=1,
        iterations=1,
    )
    record_median(
        f"viterbi_vs_hmm_{size}",
        seconds=_report(f"viterbi {size} / hmmlearn viterbi", ratios),
    )


_MEMORY_SCRIPT = textwrap.dedent(
    """
    import json, sys, tracemalloc
    sys.path[:0] = {paths!r}
    import bench_smoothing as bench
    log_emission, transmat, actions = bench._problem({n_steps})
    if {method!r} == "hmmlearn":
        call = lambda: bench._hmmlearn_forward_backward(log_emission, transmat)
    elif {method!r} == "hmmlearn_api":
        call = lambda: bench._hmmlearn_score_samples(log_emission, transmat)
    else:
        call = bench._skrbal_calls(log_emission, transmat, actions)[{method!r}]
    tracemalloc.start()
    call()
    print(json.dumps(tracemalloc.get_traced_memory()[1]))
    """
)


def _peak_memory(method, n_steps):
    here = os.path.dirname(os.path.abspath(__file__))
    script = _MEMORY_SCRIPT.format(
        paths=[here, os.path.dirname(here)], n_steps=n_steps, method=method
    )
    output = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=True
    )
    return json.loads(output.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize("size", list(SIZES))
@pytest.mark.parametrize("method", ["fb", "fb_actions"])
def test_peak_memory_against_hmmlearn(benchmark, record_median, size, method):
    benchmark.group = f"smoothing {size} steps, peak memory"
    peaks = benchmark.pedantic(
        lambda: [
            _peak_memory(name, SIZES[size])
            for name in (method, "hmmlearn", "hmmlearn_api")
        ],
        rounds=1,
        iterations=1,
    )
    ours, peer, api = peaks
    sys.stdout.write(
        f"\npeak memory {method} {size}: skrbal {ours / 1e6:.1f} MB, hmmlearn "
        f"core {peer / 1e6:.1f} MB, hmmlearn score_samples {api / 1e6:.1f} MB\n"
    )
    record_median(f"memory_{method}_{size}", seconds=ours / peer)
    record_median(f"memory_api_{method}_{size}", seconds=ours / api)
