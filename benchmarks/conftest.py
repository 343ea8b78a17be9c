"""Shared helpers for the pytest-benchmark studies.

A study compares skrbal against a peer in the same run. Each benchmark keeps
its median through the ``record_median`` fixture, and a benchmark module lists
the ratios it cares about in a module-level ``BENCHMARK_RATIOS``:
``(label, numerator, denominator, target, better)`` with ``better`` either
``"lower"`` (the ratio should be at most ``target``) or ``"higher"``. On a
busy machine a ratio of two separately timed medians drifts with the load, so
a benchmark may also time both sides in alternation and report the median of
the per-round ratios with ``record_median(name, seconds=ratio)``, then name it
in ``BENCHMARK_RATIOS`` with ``denominator=None``. The ratios are printed with
their targets in the terminal summary. BLAS runs single-threaded in every
benchmark (``SKRBAL_BENCH_BLAS_THREADS`` overrides it), as in a loky or Dask
worker on 2 cores: idle BLAS threads spinning against other processes on a
shared machine would time the load, not the code.
"""

import os

import pytest
from threadpoolctl import threadpool_limits

_MEDIANS = pytest.StashKey[dict]()
_RATIOS = pytest.StashKey[dict]()


@pytest.fixture(scope="session", autouse=True)
def _blas_threads():
    threads = int(os.environ.get("SKRBAL_BENCH_BLAS_THREADS", "1"))
    with threadpool_limits(limits=threads, user_api="blas"):
        yield


def pytest_configure(config):
    config.stash[_MEDIANS] = {}
    config.stash[_RATIOS] = {}


def pytest_collection_modifyitems(config, items):
    for item in items:
        module = getattr(item, "module", None)
        for ratio in getattr(module, "BENCHMARK_RATIOS", ()):
            config.stash[_RATIOS][ratio[0]] = ratio


@pytest.fixture
def record_median(request, benchmark):
    """Call after ``benchmark(...)`` to keep its median under ``name``."""

    def record(name, seconds=None):
        if seconds is not None:
            request.config.stash[_MEDIANS][name] = seconds
        elif benchmark.stats is not None:  # None when benchmarks are disabled
            request.config.stash[_MEDIANS][name] = benchmark.stats.stats.median

    return record


def pytest_terminal_summary(terminalreporter, config):
    medians = config.stash.get(_MEDIANS, {})
    lines = []
    for label, num, den, target, better in config.stash.get(_RATIOS, {}).values():
        if num not in medians or (den is not None and den not in medians):
            continue
        if den is None:
            ratio, detail = medians[num], "median of paired rounds"
        else:
            ratio = medians[num] / medians[den]
            detail = f"median {medians[num] * 1e3:.3f} ms / {medians[den] * 1e3:.3f} ms"
        met = ratio <= target if better == "lower" else ratio >= target
        bound = "<=" if better == "lower" else ">="
        lines.append(
            f"{label}: {ratio:.3f} (target {bound} {target}; {detail}) "
            f"{'MET' if met else 'NOT MET'}"
        )
    if lines:
        terminalreporter.section("skrbal benchmark ratios")
        for line in lines:
            terminalreporter.write_line(line)
