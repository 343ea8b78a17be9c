"""mRVM2's 10-fold accuracy over the seeds of its random starting point.

mRVM2 starts from random auxiliary class scores (``random_state``), so the
accuracy of :mod:`bench_rvm` for one seed mixes the method with the luck of
its start. This repeats bench_rvm's protocol (stratified 10-fold with
``shuffle=True, random_state=0``, ``StandardScaler`` in a ``Pipeline``,
default parameters) for ``random_state = 0 .. seeds - 1`` on iris, wine and
breast_cancer, and reports per data set the mean, minimum and maximum over
seeds of the 10-fold accuracy, with the number of relevance vectors. Run::

    git worktree add /tmp/rvm-before 8f356d6^
    OPENBLAS_NUM_THREADS=1 PYTHONPATH=. .venv/bin/python benchmarks/bench_rvm_seeds.py \
        --seeds 20 --reference /tmp/rvm-before \
        --output benchmarks/results/rvm_peers.md

``--reference`` measures an older checkout first, in a child process with
that checkout on ``PYTHONPATH``; code without ``random_state`` (before
8f356d6 mRVM2 started at zero scores) is deterministic and is run once.
The table is printed and, with ``--output``, written into that file as the
section "mRVM2 accuracy over start seeds" (replacing a previous one; bench_rvm
keeps the section when it rewrites ``rvm_peers.md``).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
import warnings
from pathlib import Path

import numpy as np
from bench_rvm import BLAS_THREADS, SEEDS_HEADING, datasets
from sklearn.model_selection import StratifiedKFold
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from threadpoolctl import threadpool_limits

import skrbal
from skrbal.rvm import MulticlassRVC

DATA_SETS = ("iris", "wine", "breast_cancer")


def fold_accuracies(X, y, seeds, split_seed=0, n_folds=10):
    """Accuracy and relevance vectors per seed and fold, two ``(seeds, folds)``.

    The folds are bench_rvm's with ``random_state=split_seed`` for the
    shuffle. One row when the installed MulticlassRVC has no ``random_state``.
    """
    splitter = StratifiedKFold(n_splits=n_folds, shuffle=True, random_state=split_seed)
    folds = list(splitter.split(X, y))
    seeded = "random_state" in MulticlassRVC().get_params()
    seeds = list(seeds) if seeded else [None]
    accuracy = np.empty((len(seeds), n_folds))
    n_relevance = np.empty((len(seeds), n_folds))
    for s, seed in enumerate(seeds):
        params = {"method": "mrvm2"}
        if seeded:
            params["random_state"] = seed
        for f, (train, test) in enumerate(folds):
            model = make_pipeline(StandardScaler(), MulticlassRVC(**params))
            model.fit(X[train], y[train])
            accuracy[s, f] = model.score(X[test], y[test])
            n_relevance[s, f] = len(model[-1].relevance_indices_)
    return accuracy, n_relevance


def run(n_seeds=20, n_splits=1, names=DATA_SETS):
    """``{data set: (accuracy, n_relevance)}``, each ``(splits, seeds, folds)``.

    Split 0 is bench_rvm's; splits 1 .. ``n_splits - 1`` shuffle the folds
    with those seeds, to tell the luck of one split from the method.
    """
    data = datasets()
    results = {}
    with threadpool_limits(limits=BLAS_THREADS), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for name in names:
            X, y = data[name]
            per_split = [
                fold_accuracies(X, y, range(n_seeds), split_seed)
                for split_seed in range(n_splits)
            ]
            results[name] = tuple(np.stack(arrays) for arrays in zip(*per_split))
    return results


def markdown_rows(results, label):
    """One table row per data set and code (see TABLE_HEADER)."""
    rows = []
    for name, (accuracy, n_relevance) in results.items():
        per_seed = accuracy[0].mean(axis=1)
        per_split = accuracy.mean(axis=(1, 2))
        rows.append(
            f"| {name} | {label} | {per_seed.size} | {per_seed.mean():.3f} "
            f"| {per_seed.min():.3f} | {per_seed.max():.3f} "
            f"| {n_relevance[0].mean():.1f} | {per_split.size} "
            f"| {per_split.mean():.3f} ({per_split.min():.3f}-{per_split.max():.3f}) |"
        )
    return rows


def per_fold_lines(results, label):
    """Per-fold accuracy on bench_rvm's split, mean over seeds, one line a set."""
    return [
        f"- {name}, {label}: " + " ".join(f"{a:.3f}" for a in accuracy[0].mean(axis=0))
        for name, (accuracy, _) in results.items()
    ]


TABLE_HEADER = [
    "| data set | code | seeds | accuracy on bench_rvm's split: mean over seeds "
    "| min | max | relevance vectors | splits | accuracy over splits and seeds: "
    "mean (range of the split means) |",
    "|---|---|---|---|---|---|---|---|---|",
]


def write_section(path, text):
    """Put ``text`` (starting with SEEDS_HEADING) in ``path``, replacing the old."""
    old = path.read_text() if path.exists() else ""
    head = old.split(SEEDS_HEADING)[0].rstrip()
    path.write_text(f"{head}\n\n{text.strip()}\n" if head else f"{text.strip()}\n")


def _reference(checkout, n_seeds, n_splits, label):
    """Table rows and per-fold lines of another checkout, in a child process."""
    env = {**os.environ, "PYTHONPATH": str(Path(checkout).resolve())}
    command = [sys.executable, __file__, "--seeds", str(n_seeds)]
    command += ["--splits", str(n_splits), "--label", label, "--rows-only"]
    done = subprocess.run(command, env=env, capture_output=True, text=True)
    if done.returncode:
        raise RuntimeError(f"reference run in {checkout} failed:\n{done.stderr}")
    return json.loads(done.stdout)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seeds", type=int, default=20)
    parser.add_argument(
        "--splits",
        type=int,
        default=1,
        help="shuffles of the 10 folds (0 is bench_rvm's), each with every seed",
    )
    parser.add_argument("--label", default="after", help="name of the code measured")
    parser.add_argument(
        "--reference",
        type=Path,
        default=None,
        help="a checkout of older skrbal code, measured first in a child process",
    )
    parser.add_argument("--reference-label", default="before")
    parser.add_argument("--output", type=Path, default=None)
    parser.add_argument("--rows-only", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    print(f"{args.label}: skrbal from {Path(skrbal.__file__).parent}", file=sys.stderr)
    start = time.perf_counter()
    rows, per_fold = [], []
    if args.reference is not None:
        rows, per_fold = _reference(
            args.reference, args.seeds, args.splits, args.reference_label
        )
    results = run(args.seeds, args.splits)
    rows += markdown_rows(results, args.label)
    per_fold += per_fold_lines(results, args.label)
    if args.rows_only:
        print(json.dumps([rows, per_fold]))
        return results
    elapsed = time.perf_counter() - start
    text = (
        f"{SEEDS_HEADING}\n\n"
        f"`benchmarks/bench_rvm_seeds.py --seeds {args.seeds} --splits "
        f"{args.splits}`: bench_rvm's protocol (stratified 10-fold, "
        f"StandardScaler in a Pipeline, default parameters, BLAS threads: "
        f"{BLAS_THREADS}) for mRVM2 with `random_state` = 0 .. {args.seeds - 1}; "
        f"accuracy is the 10-fold mean of one seed, summarised over seeds (code "
        f"without `random_state` is deterministic: one run). The last column "
        f"repeats this for the folds shuffled with `random_state` = 0 .. "
        f"{args.splits - 1}. Whole run: {elapsed:.0f} s.\n\n"
        + "\n".join(TABLE_HEADER + rows)
        + "\n\nPer-fold accuracy on bench_rvm's split, mean over seeds:\n\n"
        + "\n".join(per_fold)
        + "\n"
    )
    print(text)
    if args.output is not None:
        write_section(args.output, text)
    return results


if __name__ == "__main__":
    main()
