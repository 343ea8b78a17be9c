"""MulticlassRVC from a handful of labels, on UCI data, and in the stream learner.

Issue 31 (and 14 §5). Three studies, each a sub-command:

``few-labels``
    Draws ``--sets`` labelled sets of ``--labels`` samples (each holding all
    four health states) from ``make_degradation_stream(random_state=0)``,
    outside a held-out test set of 3000 samples, and fits each with
    ``--seeds`` start seeds (raw features). Reported per method and setting:
    the mean, min and max test accuracy, the share of fits that lose a
    labelled class (predict it for none of its training samples), the share
    that discriminate their training classes, the width used, and the mean
    belief in the damage states (3 and 4) at healthy test samples far from
    every labelled sample (farther than ``FAR`` in feature units, where the
    kernel of the paper's width is below 0.01).
``uci``
    Stratified 10-fold cross-validation (``shuffle=True, random_state=0``,
    ``StandardScaler`` in a ``Pipeline``, bench_rvm's folds) on iris, wine
    and breast_cancer; mRVM1 and mRVM2 (start seeds ``0 .. --seeds - 1``).
    With ``--reference CHECKOUT`` the same folds and seeds are first run on
    an older checkout (a child process with it on ``PYTHONPATH``), and the
    table is paired: accuracy before and after, fold by fold.
``stream``
    :func:`~skrbal.experiments.run_study` on ``--cases`` with the Gaussian
    mixture (``gmm-evpi``) and the mRVM settings ``--settings``:
    inspections (mean, median), decision accuracy over the stream and at
    the end, paired per repetition against the mixture (share of
    repetitions in which the mRVM inspects no more). Every arm runs on the
    same repetitions (``run_study``'s seed 0), with the widths the case
    declares for its mRVMs unless the setting names one. With ``--out`` each
    method is a resumable study folder ``OUT/case/method`` (the mixture's in
    ``--gmm-out`` if given, so it is computed once); ``--report-only`` reports
    the repetitions saved there without running more.

Run::

    OPENBLAS_NUM_THREADS=1 .venv/bin/python benchmarks/bench_rvm_few_labels.py \\
        few-labels --labels 10 --sets 5 --seeds 10
    OPENBLAS_NUM_THREADS=1 .venv/bin/python benchmarks/bench_rvm_few_labels.py \\
        uci --seeds 5 --reference ../main
    OPENBLAS_NUM_THREADS=1 .venv/bin/python benchmarks/bench_rvm_few_labels.py \\
        stream --cases z24 --repeats 20 --settings mrvm2 mrvm2-auto mrvm1
    OPENBLAS_NUM_THREADS=1 .venv/bin/python benchmarks/bench_rvm_few_labels.py \\
        stream --cases z24-hard synthetic-hard z24 --repeats 40 \\
        --settings mrvm2 mrvm2-lin0.1 mrvm1 --out runs --gmm-out runs-gmm

Settings are named ``method[-option...]`` (see ``SETTINGS``); a setting the
installed MulticlassRVC does not know (an older checkout) is skipped.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import warnings
from functools import partial
from pathlib import Path

import numpy as np
from threadpoolctl import threadpool_limits

from skrbal.datasets import make_degradation_stream
from skrbal.rvm import MulticlassRVC

# Estimator parameters of each named setting (raw or standardised features
# as the study uses them).
SETTINGS = {
    "mrvm2": {"method": "mrvm2"},
    "mrvm2-unbounded": {"method": "mrvm2", "max_alpha_updates": None},
    "mrvm2-2N": {"method": "mrvm2", "max_alpha_updates": "2n_samples"},
    "mrvm2-0.05": {"method": "mrvm2", "gamma": 0.05},
    "mrvm2-0.125": {"method": "mrvm2", "gamma": 0.125},
    "mrvm2-0.5": {"method": "mrvm2", "gamma": 0.5},
    "mrvm2-1": {"method": "mrvm2", "gamma": 1.0},
    "mrvm2-auto": {"method": "mrvm2", "gamma": "auto"},
    "mrvm2-freq": {"method": "mrvm2", "class_prior": "frequencies"},
    "mrvm2-auto-freq": {
        "method": "mrvm2",
        "gamma": "auto",
        "class_prior": "frequencies",
    },
    "mrvm2-lin": {"method": "mrvm2", "linear_term": 0.4},
    "mrvm2-lin0.1": {"method": "mrvm2", "linear_term": 0.1},
    "mrvm2-lin0.1-0.05": {"method": "mrvm2", "linear_term": 0.1, "gamma": 0.05},
    "mrvm2-lin0.1-auto": {"method": "mrvm2", "linear_term": 0.1, "gamma": "auto"},
    "mrvm2-lin-auto": {"method": "mrvm2", "linear_term": 0.4, "gamma": "auto"},
    "mrvm2-ev": {"method": "mrvm2", "gamma": "evidence"},
    "mrvm2-ev-lin0": {"method": "mrvm2", "gamma": "evidence", "linear_term": 0.0},
    "mrvm2-ev-ws": {"method": "mrvm2", "gamma": "evidence", "warm_start": True},
    "mrvm2-ws": {"method": "mrvm2", "warm_start": True},
    # The recommended settings (docs/user_guide/models.rst), the same on
    # every case: the width chosen by evidence, re-chosen as labels arrive,
    # and a weak linear trend.
    "mrvm2-rec": {
        "method": "mrvm2",
        "gamma": "evidence",
        "warm_start": True,
        "linear_term": 0.1,
    },
    "mrvm1-rec": {
        "method": "mrvm1",
        "gamma": "evidence",
        "warm_start": True,
        "linear_term": 0.1,
    },
    # The same behind a StandardScaler fitted on the labelled set.
    "mrvm2-rec-scaled": {
        "method": "mrvm2",
        "gamma": "evidence",
        "warm_start": True,
        "linear_term": 0.1,
        "scaled": True,
    },
    "mrvm1-rec-scaled": {
        "method": "mrvm1",
        "gamma": "evidence",
        "warm_start": True,
        "linear_term": 0.1,
        "scaled": True,
    },
    "mrvm2-ev-ws-lin0": {
        "method": "mrvm2",
        "gamma": "evidence",
        "warm_start": True,
        "linear_term": 0.0,
    },
    "mrvm1": {"method": "mrvm1"},
    "mrvm1-ev": {"method": "mrvm1", "gamma": "evidence"},
    "mrvm1-ev-lin0": {"method": "mrvm1", "gamma": "evidence", "linear_term": 0.0},
    "mrvm1-ev-ws": {"method": "mrvm1", "gamma": "evidence", "warm_start": True},
    "mrvm1-ws": {"method": "mrvm1", "warm_start": True},
    "mrvm1-ev-ws-lin0": {
        "method": "mrvm1",
        "gamma": "evidence",
        "warm_start": True,
        "linear_term": 0.0,
    },
    "mrvm1-lin": {"method": "mrvm1", "linear_term": 0.4},
    "mrvm1-lin0.1": {"method": "mrvm1", "linear_term": 0.1},
    "mrvm1-unbounded": {"method": "mrvm1", "max_alpha_updates": None},
    "mrvm1-2N": {"method": "mrvm1", "max_alpha_updates": "2n_samples"},
    "mrvm1-0.05": {"method": "mrvm1", "gamma": 0.05},
    "mrvm1-auto": {"method": "mrvm1", "gamma": "auto"},
    "mrvm1-freq": {"method": "mrvm1", "class_prior": "frequencies"},
    "mrvm1-auto-freq": {
        "method": "mrvm1",
        "gamma": "auto",
        "class_prior": "frequencies",
    },
}
# Healthy test samples farther than this from every labelled sample are "far
# from the data": exp(-FAR**2 / 2) < 0.01 at the paper's width 1/D (D = 2).
FAR = 3.0
HEALTHY, DAMAGE = 1, (3, 4)


def _known(params):
    """Whether the installed MulticlassRVC takes every parameter of a setting."""
    return set(params) - {"scaled"} <= set(MulticlassRVC().get_params())


def _estimator(random_state, params):
    """MulticlassRVC with a setting's parameters (``scaled`` is the study's:
    the few-labels study then standardises the features on the whole
    record, without labels, as the Z24-like cases are)."""
    params = {key: value for key, value in params.items() if key != "scaled"}
    return MulticlassRVC(random_state=random_state, **params)


def labelled_sets(y, pool, n_labels, n_sets, seed=7):
    """``n_sets`` random subsets of ``pool`` of size ``n_labels``, all classes in."""
    rng = np.random.default_rng(seed)
    n_classes = np.unique(y).size
    sets = []
    while len(sets) < n_sets:
        chosen = rng.choice(pool, n_labels, replace=False)
        if np.unique(y[chosen]).size == n_classes:
            sets.append(chosen)
    return sets


def _far_healthy(X, y, test, chosen):
    healthy = test[y[test] == HEALTHY]
    distance = np.sqrt(((X[healthy, None, :] - X[None, chosen, :]) ** 2).sum(-1))
    return healthy[distance.min(axis=1) > FAR]


def few_labels(n_labels, n_sets, n_seeds, settings):
    """Per setting, one row per fit: accuracy, lost, discriminates, gamma,
    belief in damage far from the data (NaN without such samples)."""
    X, y, _ = make_degradation_stream(random_state=0)
    scaled = (X - X.mean(axis=0)) / X.std(axis=0)
    rng = np.random.default_rng(0)
    test = rng.choice(len(X), 3000, replace=False)
    pool = np.setdiff1d(np.arange(len(X)), test)
    rows = {name: [] for name in settings if _known(SETTINGS[name])}
    with threadpool_limits(1), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for chosen in labelled_sets(y, pool, n_labels, n_sets):
            far = _far_healthy(X, y, test, chosen)
            for name in rows:
                for seed in range(n_seeds):
                    model = _estimator(seed, SETTINGS[name])
                    features = scaled if SETTINGS[name].get("scaled") else X
                    model.fit(features[chosen], y[chosen])
                    damage = np.isin(model.classes_, DAMAGE)
                    belief = (
                        model.predict_proba(features[far])[:, damage].sum(axis=1).mean()
                        if far.size
                        else np.nan
                    )
                    rows[name].append(
                        (
                            model.score(features[test], y[test]),
                            getattr(model, "lost_classes_", np.empty(0)).size > 0,
                            model.discriminates_,
                            getattr(model, "gamma_", 1.0 / X.shape[1]),
                            belief,
                            far.size,
                        )
                    )
    return {name: np.array(value, dtype=float) for name, value in rows.items()}


def few_labels_report(results, n_labels, n_sets, n_seeds):
    lines = [
        f"# {n_labels} labels of the degradation stream, {n_sets} draws x "
        f"{n_seeds} start seeds, raw features",
        "",
        "| setting | test accuracy mean | min | max | fits losing a class "
        "| fits that discriminate | gamma (median) | belief in damage at far "
        "healthy samples (mean; samples per draw) |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for name, rows in results.items():
        accuracy, lost, discriminates, gamma, belief, n_far = rows.T
        lines.append(
            f"| {name} | {accuracy.mean():.3f} | {accuracy.min():.3f} "
            f"| {accuracy.max():.3f} | {lost.mean():.2f} | {discriminates.mean():.2f} "
            f"| {np.median(gamma):.3g} | {np.nanmean(belief):.3f}; "
            f"{n_far.mean():.0f} |"
        )
    return "\n".join(lines)


UCI = tuple(os.environ.get("BENCH_UCI", "iris wine breast_cancer").split())


def uci(n_seeds, settings):
    """``{data set: {setting: accuracy (seeds, folds)}}`` on bench_rvm's folds."""
    from sklearn.datasets import load_breast_cancer, load_iris, load_wine
    from sklearn.model_selection import StratifiedKFold
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    loaders = {
        "iris": load_iris,
        "wine": load_wine,
        "breast_cancer": load_breast_cancer,
    }
    splitter = StratifiedKFold(n_splits=10, shuffle=True, random_state=0)
    results = {}
    with threadpool_limits(1), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for name in UCI:
            X, y = loaders[name](return_X_y=True)
            folds = list(splitter.split(X, y))
            results[name] = {}
            for setting in settings:
                if not _known(SETTINGS[setting]):
                    continue
                accuracy = np.empty((n_seeds, len(folds)))
                for seed in range(n_seeds):
                    for f, (train, test) in enumerate(folds):
                        model = make_pipeline(
                            StandardScaler(),
                            _estimator(seed, SETTINGS[setting]),
                        )
                        model.fit(X[train], y[train])
                        accuracy[seed, f] = model.score(X[test], y[test])
                results[name][setting] = accuracy.tolist()
    return results


# Runs this script in a child process on another checkout: an editable
# install's import hook would otherwise win over PYTHONPATH.
_CHILD = """
import runpy, sys
sys.meta_path[:] = [f for f in sys.meta_path if "editable" not in repr(f).lower()]
sys.path.insert(0, sys.argv[1])
sys.argv = sys.argv[2:]
runpy.run_path(sys.argv[0], run_name="__main__")
"""


def _uci_reference(checkout, n_seeds, settings):
    checkout = str(Path(checkout).resolve())
    command = [sys.executable, "-c", _CHILD, checkout, __file__, "uci"]
    command += ["--seeds", str(n_seeds), "--json", "--settings", *settings]
    output = subprocess.run(
        command, env=dict(os.environ), check=True, capture_output=True, text=True
    ).stdout
    return json.loads(output.strip().splitlines()[-1])


def uci_report(after, before, n_seeds):
    lines = [
        f"# UCI, stratified 10-fold (bench_rvm's folds), {n_seeds} start seeds",
        "",
        "| data set | setting | accuracy before | after | after - before "
        "(paired over seeds x folds: mean, folds worse / better) |",
        "|---|---|---|---|---|",
    ]
    for name, per_setting in after.items():
        for setting, accuracy in per_setting.items():
            accuracy = np.asarray(accuracy)
            old = (before or {}).get(name, {}).get(setting)
            if old is None:
                lines.append(
                    f"| {name} | {setting} | n/a | {accuracy.mean():.3f} | n/a |"
                )
                continue
            old = np.asarray(old)
            if old.shape != accuracy.shape:  # deterministic before: one seed
                old = np.broadcast_to(old[:1], accuracy.shape)
            diff = accuracy - old
            lines.append(
                f"| {name} | {setting} | {old.mean():.3f} | {accuracy.mean():.3f} "
                f"| {diff.mean():+.4f} ({np.sum(diff < 0)} / {np.sum(diff > 0)}) |"
            )
    return "\n".join(lines)


def _make(params):
    return _estimator(0, params)


def _case_params(case, name):
    """A setting's parameters on ``case``: the case's declared ones for its
    method (e.g. the synthetic cases' width 0.05 on raw features), overridden
    by the setting's own."""
    params = SETTINGS[name]
    declared = case.method_params.get(f"{params['method']}-evpi", {})
    return {**declared, **params}


def _run(case, method, n_repeats, out, report_only=False):
    from skrbal.experiments import load_study, run_study

    label = getattr(method, "name", method)
    folder = None if out is None else Path(out) / case.name / label
    if report_only:
        # The repetitions saved so far (a run stopped early reports fewer;
        # a setting not run yet, none).
        try:
            return load_study(folder).totals
        except FileNotFoundError:
            return None
    return run_study(
        case,
        [method],
        n_repeats=n_repeats,
        progress=False,
        out=folder,
        resume=folder is not None,
    ).totals


def stream(cases, n_repeats, settings, out=None, gmm_out=None, report_only=False):
    """``{case: totals DataFrame}`` of run_study with gmm-evpi and the settings.

    Every method runs on the same repetitions (``run_study``'s seed 0: the
    same splits and initial labels for every arm). With ``out``, each method
    is a study folder ``out/case/method`` resumed if it exists (so a long run
    can be stopped and continued, and the mixture reused with ``gmm_out``);
    ``report_only`` reads the repetitions saved there without running more.
    """
    import pandas as pd

    from skrbal.experiments import Method, get_case_study

    results = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for name in cases:
            case = get_case_study(name)
            totals = [_run(case, "gmm-evpi", n_repeats, gmm_out or out, report_only)]
            for setting in settings:
                if not _known(SETTINGS[setting]):
                    continue
                params = _case_params(case, setting)
                method = Method(setting, partial(_make, params))
                totals.append(_run(case, method, n_repeats, out, report_only))
            results[name] = pd.concat(
                [t for t in totals if t is not None], ignore_index=True
            )
    return results


def stream_report(results, n_repeats):
    lines = [
        f"# Stream learner, {n_repeats} repetitions (the paper's protocol)",
        "",
        "| case | method | repetitions | inspections mean | median | decision "
        "accuracy"
        " (stream) | minus GMM's (paired mean) | final decision accuracy "
        "| inspections / GMM's (ratio of means) | repetitions with no more "
        "inspections than the GMM | s / repetition |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for case, totals in results.items():
        gmm = totals[totals.method == "gmm-evpi"].set_index("repetition")
        for method, rows in totals.groupby("method", sort=False):
            rows = rows.set_index("repetition")
            rows = rows.loc[rows.index.intersection(gmm.index)]
            reference = gmm.loc[rows.index]
            paired = rows.n_inspections <= reference.n_inspections
            accuracy_gap = rows.decision_accuracy - reference.decision_accuracy
            ratio = rows.n_inspections.mean() / reference.n_inspections.mean()
            lines.append(
                f"| {case} | {method} | {len(rows)} "
                f"| {rows.n_inspections.mean():.1f} "
                f"| {rows.n_inspections.median():.1f} "
                f"| {rows.decision_accuracy.mean():.4f} "
                f"| {accuracy_gap.mean():+.4f} "
                f"| {rows.final_decision_accuracy.mean():.4f} "
                f"| {ratio:.2f} "
                f"| {paired.mean():.2f} | {rows.seconds.mean():.2f} |"
            )
    return "\n".join(lines)


def first_fit(cases, n_splits, settings, extra=0):
    """The first fit of each setting on a case's initial labels, split by split.

    With ``extra``, ``extra`` random points of the stream
    (``RandomState(split)``) are labelled too: a fit later in the campaign.

    For ``case.split(random_state=r)``, ``r < n_splits`` (initial labels
    drawn as a study's are, though not with its repetitions' seeds), fits
    each setting (the case's declared widths applied) on the initial labels
    with every state declared. Reports where it started, its relevance
    vectors, the classes it lost, its mean belief in the damage states (3
    and 4) at the undamaged points of the first 3000 of the stream, and its
    accuracy there.
    """
    from skrbal.experiments import get_case_study

    lines = [
        "| case | split | labels per state | setting | start | width | "
        "relevance vectors | lost classes | belief in damage at undamaged "
        "stream points | stream accuracy |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    with threadpool_limits(1), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for name in cases:
            case = get_case_study(name)
            X, y, _ = case.record()
            states = np.unique(y)
            for split in range(n_splits):
                indices = case.split(random_state=split)
                X0, y0 = X[indices.initial_indices], y[indices.initial_indices]
                if extra:
                    more = np.random.RandomState(split).choice(
                        len(indices.y_stream), extra, replace=False
                    )
                    X0 = np.vstack([X0, indices.X_stream[more]])
                    y0 = np.concatenate([y0, indices.y_stream[more]])
                X_stream = indices.X_stream[:3000]
                y_stream = indices.y_stream[:3000]
                undamaged = ~np.isin(y_stream, DAMAGE)
                counts = [int(np.sum(y0 == state)) for state in states]
                for setting in settings:
                    params = _case_params(case, setting)
                    model = _make({**params, "classes": states}).fit(X0, y0)
                    proba = model.predict_proba(X_stream[undamaged])
                    belief = proba[:, np.isin(states, DAMAGE)].sum(axis=1).mean()
                    accuracy = model.score(X_stream, y_stream)
                    lines.append(
                        f"| {name} | {split} | {counts} | {setting} "
                        f"| {model.start_} | {model.gamma_:.3g} "
                        f"| {model.relevance_indices_.size} "
                        f"| {model.lost_classes_.tolist()} | {belief:.3f} "
                        f"| {accuracy:.3f} |"
                    )
    return "\n".join(lines)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="study", required=True)
    few = sub.add_parser("few-labels")
    few.add_argument("--labels", type=int, default=10)
    few.add_argument("--sets", type=int, default=5)
    few.add_argument("--seeds", type=int, default=10)
    few.add_argument(
        "--settings",
        nargs="+",
        default=["mrvm2-unbounded", "mrvm2-2N", "mrvm2", "mrvm2-0.05", "mrvm2-auto"],
    )
    uci_parser = sub.add_parser("uci")
    uci_parser.add_argument("--seeds", type=int, default=5)
    uci_parser.add_argument("--settings", nargs="+", default=["mrvm1", "mrvm2"])
    uci_parser.add_argument("--reference", default=None)
    uci_parser.add_argument("--json", action="store_true")
    streams = sub.add_parser("stream")
    streams.add_argument("--cases", nargs="+", default=["z24"])
    streams.add_argument("--repeats", type=int, default=20)
    streams.add_argument("--settings", nargs="+", default=["mrvm2", "mrvm1"])
    streams.add_argument("--out", default=None)
    streams.add_argument("--gmm-out", default=None)
    streams.add_argument("--report-only", action="store_true")
    first = sub.add_parser("first-fit")
    first.add_argument("--cases", nargs="+", default=["synthetic-hard", "z24-hard"])
    first.add_argument("--splits", type=int, default=3)
    first.add_argument("--extra-labels", type=int, default=0)
    first.add_argument(
        "--settings", nargs="+", default=["mrvm2", "mrvm1", "mrvm1-lin0.1"]
    )
    args = parser.parse_args(argv)
    if args.study == "first-fit":
        report = first_fit(args.cases, args.splits, args.settings, args.extra_labels)
        print(report)
        return report
    if args.study == "few-labels":
        results = few_labels(args.labels, args.sets, args.seeds, args.settings)
        print(few_labels_report(results, args.labels, args.sets, args.seeds))
    elif args.study == "uci":
        before = (
            _uci_reference(args.reference, args.seeds, args.settings)
            if args.reference
            else None
        )
        results = uci(args.seeds, args.settings)
        if args.json:
            print(json.dumps(results))
        else:
            print(uci_report(results, before, args.seeds))
    else:
        results = stream(
            args.cases,
            args.repeats,
            args.settings,
            args.out,
            args.gmm_out,
            args.report_only,
        )
        print(stream_report(results, args.repeats))
    return results


if __name__ == "__main__":
    main()
