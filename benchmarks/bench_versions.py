"""Seconds per repetition of every method: this checkout against another one.

Issue 14 asks for the time per repetition of each method of the synthetic
reproduction before and after the speed-ups, and for identical results where
the maths did not change. This runs the same repetitions of a case study with
two checkouts of skrbal (``--before``, a directory holding another version's
``skrbal`` package, e.g. a ``git worktree``, and this one), in alternating
rounds: each round runs ``--per-round`` repetitions of every method in a fresh
process, first with one version then the other (the order swapped every
round), so the machine's drifting load falls on both alike. It reports per
method the median seconds per repetition of each version, the median of the
per-round ratios after / before with its quartiles, and whether the two
versions gave the same results: every column of ``totals`` and ``queries``
but the wall times and the warning counts, compared exactly.

BLAS runs single-threaded, as in a loky or Dask worker on 2 cores.

Run::

    git worktree add /tmp/skrbal-before 49a5594
    .venv/bin/python benchmarks/bench_versions.py --before /tmp/skrbal-before \\
        --rounds 10 --per-round 2
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np
import pandas as pd

HERE = Path(__file__).resolve().parent.parent

# Runs in the child, with the version under test first on sys.path.
_CHILD = """
import json, sys, warnings
from threadpoolctl import threadpool_limits
import skrbal
from skrbal.experiments import get_case_study, get_method
from skrbal.experiments._runner import run_repetition

case, methods, first, count, out = sys.argv[1:6]
methods = methods.split(",")
warnings.simplefilter("ignore")
frames = {"totals": [], "queries": []}
with threadpool_limits(1):
    study = get_case_study(case)
    for repetition in range(int(first), int(first) + int(count)):
        result = run_repetition(study, [get_method(m) for m in methods], repetition)
        frames["totals"].append(result.totals)
        frames["queries"].append(result.queries)
import pandas as pd
for name, parts in frames.items():
    pd.concat(parts).to_pickle(f"{out}.{name}.pkl")
print(json.dumps({"skrbal": skrbal.__file__}))
"""


def run_version(root, case, methods, first, count, out):
    """Run repetitions ``first..first+count-1`` with the skrbal under ``root``."""
    env = dict(os.environ, PYTHONPATH=str(root), OPENBLAS_NUM_THREADS="1")
    done = subprocess.run(
        [
            sys.executable,
            "-c",
            _CHILD,
            case,
            ",".join(methods),
            str(first),
            str(count),
            out,
        ],
        env=env,
        capture_output=True,
        text=True,
        cwd=root,
        check=False,
    )
    if done.returncode:
        raise RuntimeError(f"the run under {root} failed:\n{done.stderr}")
    loaded = json.loads(done.stdout.strip().splitlines()[-1])["skrbal"]
    if not Path(loaded).resolve().is_relative_to(Path(root).resolve()):
        raise RuntimeError(f"the child imported {loaded}, not the one under {root}")
    return (pd.read_pickle(f"{out}.totals.pkl"), pd.read_pickle(f"{out}.queries.pkl"))


# Not results: wall times, and the warning counts (format 4 counts every
# warning a method raised, format 3 only the learner's own).
_BOOKKEEPING = ("seconds", "n_warnings", "warnings")


def _results_only(frame):
    return frame.drop(
        columns=[c for c in frame.columns if c in _BOOKKEEPING]
    ).reset_index(drop=True)


def compare(before, case, methods, rounds, per_round):
    """Per-method seconds of both versions, ratios and result equality."""
    versions = {"before": Path(before), "after": HERE}
    totals = {name: [] for name in versions}
    queries = {name: [] for name in versions}
    with tempfile.TemporaryDirectory() as tmp:
        for k in range(rounds):
            order = list(versions) if k % 2 == 0 else list(versions)[::-1]
            for name in order:
                t, q = run_version(
                    versions[name],
                    case,
                    methods,
                    k * per_round,
                    per_round,
                    f"{tmp}/{name}{k}",
                )
                t["round"] = k
                totals[name].append(t)
                queries[name].append(q)
    totals = {name: pd.concat(frames) for name, frames in totals.items()}
    queries = {name: pd.concat(frames) for name, frames in queries.items()}
    rows = []
    for method in methods:
        seconds = {
            name: frame[frame.method == method].groupby("round").seconds.mean()
            for name, frame in totals.items()
        }
        ratio = seconds["after"] / seconds["before"]
        same = {}
        for label, frames in (("totals", totals), ("queries", queries)):
            a, b = (
                _results_only(frames[name][frames[name].method == method])
                for name in ("before", "after")
            )
            same[label] = a.shape == b.shape and a.equals(b)
        rows.append(
            {
                "method": method,
                "before s/rep": seconds["before"].median(),
                "after s/rep": seconds["after"].median(),
                "after / before (median [quartiles] over rounds)": (
                    "{:.2f} [{:.2f}, {:.2f}]".format(
                        *np.percentile(ratio, [50, 25, 75])
                    )
                ),
                "identical results": "yes"
                if same["totals"] and same["queries"]
                else "no",
            }
        )
    table = pd.DataFrame(rows)
    total = {
        name: frame.groupby("round").seconds.sum() / per_round
        for name, frame in totals.items()
    }
    return table, total


def main(argv=None):
    from skrbal.experiments import available_methods

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before", required=True, help="checkout to compare with")
    parser.add_argument("--case", default="synthetic")
    parser.add_argument("--methods", nargs="+", default=available_methods())
    parser.add_argument("--rounds", type=int, default=10)
    parser.add_argument("--per-round", type=int, default=2)
    args = parser.parse_args(argv)
    table, total = compare(
        args.before, args.case, args.methods, args.rounds, args.per_round
    )
    print(
        f"# {args.case}: {args.rounds} rounds x {args.per_round} repetitions, "
        f"before = {args.before}\n"
    )
    print(table.to_markdown(index=False, floatfmt=".3f"))
    ratio = total["after"] / total["before"]
    print(
        "\nAll methods, seconds per repetition: before {:.3f}, after {:.3f}; "
        "after / before {:.2f} [{:.2f}, {:.2f}]".format(
            total["before"].median(),
            total["after"].median(),
            *np.percentile(ratio, [50, 25, 75]),
        )
    )
    for name in ("before", "after"):
        minutes = total[name].median() * 1000 / 2 / 60
        print(f"{name}: 1000 repetitions on 2 workers ~ {minutes:.1f} min")


if __name__ == "__main__":
    main()
