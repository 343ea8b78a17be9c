"""Paired rounds: time skrbal and its peer in alternation, in the same run.

On a shared machine the load drifts between two separately timed benchmarks;
timing both sides in each round and keeping the per-round ratio cancels most
of it (see ``benchmarks/conftest.py`` for how the ratios are reported).
"""

import time

import numpy as np


def time_paired(benchmark, first, second, *, rounds, warmup_rounds=1, alternate=False):
    """Time ``first`` and ``second`` once each per round under ``benchmark``.

    Parameters
    ----------
    benchmark : pytest-benchmark fixture
        Runs the rounds (``benchmark.pedantic``, one iteration per round).
    first, second : callable
        Called without arguments.
    rounds, warmup_rounds : int
        Timed rounds, and untimed rounds before them.
    alternate : bool, default=False
        Call ``second`` first in every other round, so neither side always
        inherits the other's freed memory or cache state. Leave it off when
        ``second`` uses what ``first`` computed.

    Returns
    -------
    first_seconds, second_seconds : ndarray
        The times of the timed rounds (one row when benchmarks are disabled).
    """
    times = []

    def timed(call):
        start = time.perf_counter()
        call()
        return time.perf_counter() - start

    def run():
        if alternate and len(times) % 2:
            second_time = timed(second)
            times.append((timed(first), second_time))
        else:
            first_time = timed(first)
            times.append((first_time, timed(second)))

    benchmark.pedantic(run, rounds=rounds, iterations=1, warmup_rounds=warmup_rounds)
    first_seconds, second_seconds = np.array(times[-rounds:]).T
    return first_seconds, second_seconds


def quartiles(ratio):
    """Return the first quartile, median and third quartile of ``ratio``."""
    return np.percentile(ratio, [25, 50, 75])


def repeated(call, n_calls, *args, **kwargs):
    """Return a callable that calls ``call(*args, **kwargs)`` ``n_calls`` times.

    No result is kept, so a round holds one result in memory at a time.
    """

    def calls():
        for _ in range(n_calls):
            call(*args, **kwargs)

    return calls
