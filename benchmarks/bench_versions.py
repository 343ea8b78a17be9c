"""Seconds per repetition of every method: this checkout against another one.

Issue 14 asks for the time per repetition of each method of the synthetic
reproduction before and after the speed-ups, and for identical results where
the maths did not change. This runs the same repetitions of a case study with
two checkouts of skrbal (``--before``, a directory holding another version's
``skrbal`` package, e.g. a ``git worktree``, and this one), in alternating
rounds: each round runs ``--per-round`` repetitions of every method in a fresh
process, first with one version then the other (the order swapped every
round), so the machine's drifting load falls on both alike. Each process first
runs ``--warmup`` untimed repetitions (default 1), as pyperf does: the first
repetition of a process pays for lazy imports and first-call caches. It reports per
method the median seconds per repetition of each version, the median of the
per-round ratios after / before with its quartiles, and whether the two
versions gave the same results: every column of ``totals`` and ``queries``
but the wall times and the warning counts, compared exactly.

BLAS runs single-threaded, as in a loky or Dask worker on 2 cores.

Wall times on a shared machine drift by 10-40 % between processes. With
``--instructions``, each version instead runs under valgrind's callgrind, once
with one repetition and once with ``1 + --per-round`` (the same repetitions),
and the difference of the two instruction counts is the cost of the
``--per-round`` repetitions alone (imports and the first repetition's warm-up
cancel out). Instruction counts do not depend on the machine's load: the same
command gives the same count within a fraction of a percent, so a few percent
is measurable. They do not see cache misses or memory stalls, which only wall
times show.

Run::

    git worktree add /tmp/skrbal-before 49a5594
    .venv/bin/python benchmarks/bench_versions.py --before /tmp/skrbal-before \\
        --rounds 10 --per-round 2
    .venv/bin/python benchmarks/bench_versions.py --before /tmp/skrbal-before \\
        --instructions --methods gmm-evpi --per-round 6
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
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
from skrbal.experiments import run_repetition

case, methods, first, count, out, warmup = sys.argv[1:7]
methods = methods.split(",")
warnings.simplefilter("ignore")
frames = {"totals": [], "queries": []}
with threadpool_limits(1):
    study = get_case_study(case)
    # Untimed: the first repetitions of a process pay for lazy imports and
    # first-call caches, which are not the per-repetition cost.
    for _ in range(int(warmup)):
        run_repetition(study, [get_method(m) for m in methods], int(first))
    for repetition in range(int(first), int(first) + int(count)):
        result = run_repetition(study, [get_method(m) for m in methods], repetition)
        frames["totals"].append(result.totals)
        frames["queries"].append(result.queries)
import pandas as pd
for name, parts in frames.items():
    pd.concat(parts).to_pickle(f"{out}.{name}.pkl")
print(json.dumps({"skrbal": skrbal.__file__}))
"""


def run_version(root, case, methods, first, count, out, prefix=(), warmup=0):
    """Run repetitions ``first..first+count-1`` with the skrbal under ``root``.

    ``prefix`` is a command the child runs under (valgrind).
    """
    env = dict(os.environ, PYTHONPATH=str(root), OPENBLAS_NUM_THREADS="1")
    done = subprocess.run(
        [
            *prefix,
            sys.executable,
            "-c",
            _CHILD,
            case,
            ",".join(methods),
            str(first),
            str(count),
            out,
            str(warmup),
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


def compare(before, case, methods, rounds, per_round, warmup=1):
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
                    warmup=warmup,
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


def _instructions(root, case, methods, count, tmp, tag):
    """Instructions callgrind counts for repetitions ``0..count-1``."""
    out = f"{tmp}/{tag}.callgrind"
    prefix = ("valgrind", "--tool=callgrind", f"--callgrind-out-file={out}")
    run_version(root, case, methods, 0, count, f"{tmp}/{tag}", prefix)
    with open(out) as lines:
        for line in lines:
            if line.startswith(("summary:", "totals:")):
                return int(line.split()[1])
    raise RuntimeError(f"callgrind wrote no instruction count to {out}")


def compare_instructions(before, case, methods, per_round):
    """Per method: instructions per repetition of both versions, and the ratio.

    A random method runs beside the EVPI method whose inspections it counts,
    and that method's own count is subtracted.
    """
    from skrbal.experiments import get_method

    if shutil.which("valgrind") is None:
        raise SystemExit("--instructions needs valgrind on the PATH")
    versions = {"before": Path(before), "after": HERE}
    rows = []
    with tempfile.TemporaryDirectory() as tmp:

        def per_repetition(root, group, tag):
            counts = [
                _instructions(root, case, group, n, tmp, f"{tag}-{n}")
                for n in (1, 1 + per_round)
            ]
            return (counts[1] - counts[0]) / per_round

        alone = {}
        for method in methods:
            partner = get_method(method).matched_to
            per_rep = {}
            for name, root in versions.items():
                if partner is None:
                    if (name, method) not in alone:
                        alone[name, method] = per_repetition(
                            root, [method], f"{name}-{method}"
                        )
                    per_rep[name] = alone[name, method]
                    continue
                if (name, partner) not in alone:
                    alone[name, partner] = per_repetition(
                        root, [partner], f"{name}-{partner}"
                    )
                both = per_repetition(root, [partner, method], f"{name}-{method}")
                per_rep[name] = both - alone[name, partner]
            rows.append(
                {
                    "method": method,
                    "before Minstr/rep": per_rep["before"] / 1e6,
                    "after Minstr/rep": per_rep["after"] / 1e6,
                    "after / before": per_rep["after"] / per_rep["before"],
                }
            )
    return pd.DataFrame(rows)


def main(argv=None):
    from skrbal.experiments import available_methods

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before", required=True, help="checkout to compare with")
    parser.add_argument("--case", default="synthetic")
    parser.add_argument("--methods", nargs="+", default=available_methods())
    parser.add_argument("--rounds", type=int, default=10)
    parser.add_argument("--per-round", type=int, default=2)
    parser.add_argument(
        "--warmup",
        type=int,
        default=1,
        help="untimed repetitions at the start of each process (default 1)",
    )
    parser.add_argument(
        "--instructions",
        action="store_true",
        help="count instructions under valgrind's callgrind instead of timing",
    )
    args = parser.parse_args(argv)
    if args.instructions:
        print(
            f"# {args.case}: instructions of repetitions 1..{args.per_round} "
            f"(callgrind), before = {args.before}\n"
        )
        table = compare_instructions(
            args.before, args.case, args.methods, args.per_round
        )
        print(table.to_markdown(index=False, floatfmt=".3f"))
        return
    table, total = compare(
        args.before,
        args.case,
        args.methods,
        args.rounds,
        args.per_round,
        warmup=args.warmup,
    )
    print(
        f"# {args.case}: {args.rounds} rounds x {args.per_round} repetitions "
        f"(after {args.warmup} untimed), before = {args.before}\n"
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
