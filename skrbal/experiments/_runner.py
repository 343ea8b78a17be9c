"""Repeated risk-based active-learning studies on joblib or Dask, resumable."""

from __future__ import annotations

import contextlib
import json
import platform
import time
import warnings
from collections import Counter
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pandas as pd
import sklearn
from joblib import Parallel, delayed, parallel_backend
from sklearn.utils import Bunch
from tqdm.auto import tqdm

from skrbal._files import atomic_write_text, folder_lock
from skrbal._fingerprint import fingerprint
from skrbal._validation import check_int
from skrbal.active import RiskBasedLearner
from skrbal.experiments._cases import CaseStudy, get_case_study
from skrbal.experiments._folder import (
    FORMAT_VERSION,
    combine,
    open_study,
    rep_path,
    repetition_payload,
)
from skrbal.experiments._methods import Method, get_method

__all__ = ["replay_repetition", "run_repetition", "run_study"]


def repetition_seed(seed: int, repetition: int) -> int:
    """The seed of one repetition of a study: its split and its random draws.

    Derived from the study's seed and the repetition's index alone
    (:class:`numpy.random.SeedSequence`), so a repetition is the same
    whichever worker runs it and in whatever order; a benchmark that
    compares methods on a study's splits draws them with it.

    Parameters
    ----------
    seed : int
        The study's seed.
    repetition : int
        The repetition's index.

    Returns
    -------
    seed : int
        A seed below ``2**32``.

    Examples
    --------
    >>> from skrbal.experiments import repetition_seed
    >>> repetition_seed(0, 3) == repetition_seed(0, 3) != repetition_seed(0, 4)
    True
    """
    return int(np.random.SeedSequence([seed, repetition]).generate_state(1)[0])


def _ordered(methods: Sequence[Method]) -> list[Method]:
    """EVPI methods first, so a random method can match their counts."""
    queries = {m.name: m.query for m in methods}
    for method in methods:
        if method.query != "random":
            continue
        if method.matched_to not in queries:
            raise ValueError(
                f"method {method.name!r} matches the inspections of "
                f"{method.matched_to!r}, which is not in the study."
            )
        if queries[method.matched_to] != "evpi":
            raise ValueError(
                f"method {method.name!r} matches the inspections of "
                f"{method.matched_to!r}, a random method: match an EVPI method, "
                "whose inspections the random one counts."
            )
    return sorted(methods, key=lambda m: m.query == "random")


def _learner(method: Method, case, rng_seed: int, counts: dict[str, int]):
    """The stream learner of one method in one repetition."""
    process = case.process()
    params = dict(method.learner_params)
    if method.query == "random":
        params.update(
            strategy="random",
            n_queries=counts[method.matched_to],
            # Modulo: a RandomState seed must stay below 2**32.
            random_state=(rng_seed + 1) % 2**32,
        )
    return RiskBasedLearner(estimator=method.estimator(case), process=process, **params)


def _fit_learner(learner: RiskBasedLearner, split: Bunch, *, test: bool = True):
    fit_kwargs = {}
    if learner.semi_supervised is not None:
        # The record's own actions (the repairs) choose the transitions that
        # smoothing assumes between known labels.
        fit_kwargs["actions"] = split.actions_stream
    if test:
        fit_kwargs.update(X_test=split.X_test, y_test=split.y_test)
    return learner.fit(
        split.X_stream, split.y_stream, initial=split.initial_indices, **fit_kwargs
    )


def _query_frame(learner, split, method: Method, repetition: int) -> pd.DataFrame:
    frame = learner.history_.queries.copy()
    steps = frame["step"].to_numpy()
    # Stream positions shift between repetitions (each streams a different
    # half of the record); record positions line up across repetitions.
    record_index = np.where(steps >= 0, split.stream_indices[np.maximum(steps, 0)], -1)
    frame.insert(frame.columns.get_loc("step") + 1, "record_index", record_index)
    frame.insert(0, "method", method.name)
    frame.insert(0, "repetition", repetition)
    return frame


def warning_counts(caught) -> str:
    """``"Category:count"`` of recorded warnings, by name, joined by ``"; "``."""
    counts = Counter(type(w.message).__name__ for w in caught)
    return "; ".join(f"{name}:{counts[name]}" for name in sorted(counts))


def run_repetition(case, methods, repetition: int, *, seed: int = 0) -> Bunch:
    """Run every method once on one split of a case study.

    Parameters
    ----------
    case : CaseStudy or str
        The case study.
    methods : sequence of Method or str
        Methods to run; random ones after the EVPI ones they match.
    repetition : int
        Index of the repetition; with ``seed`` it fixes the split.
    seed : int, default=0
        Seed of the study.

    Returns
    -------
    result : Bunch
        ``queries``: one row per method and query (the learners'
        ``history_.queries`` with ``repetition`` and ``method`` columns, and
        ``record_index``, the queried observation's position in the whole
        record, -1 for the initial model); ``totals``: one row per method
        (campaign totals, final test scores, the size of the initial labelled
        set, ``n_warnings`` and ``warnings``, the number of warnings the
        method raised in this repetition and their counts by category, e.g.
        ``"ConvergenceWarning:2; NonDiscriminatingFitWarning:1"``, and
        ``seconds``, the method's wall-clock time in this repetition, the only
        column that differs between two runs of a study). Warnings raised
        while a method runs are recorded there, not shown.
        The ``step`` column of ``queries`` is each query's stream position.

    See Also
    --------
    replay_repetition : One method's run again, with its fitted models.

    Examples
    --------
    >>> from sklearn.naive_bayes import GaussianNB
    >>> from skrbal.experiments import Method, run_repetition
    >>> result = run_repetition("synthetic", [Method("nb", GaussianNB)], 0)
    >>> result.totals[["method", "n_inspections"]].shape
    (1, 2)
    """
    case = get_case_study(case) if isinstance(case, str) else case
    methods = _ordered([get_method(m) for m in methods])
    rng_seed = repetition_seed(seed, repetition)
    split = case.split(random_state=rng_seed)
    counts: dict[str, int] = {}
    queries, totals = [], []
    for method in methods:
        start = time.perf_counter()
        # Recorded, not shown: over a study the same warnings would otherwise
        # fill the terminal (every catch_warnings elsewhere resets Python's
        # once-per-location memory); the report counts them instead. Python's
        # warning filters are per process: on a Dask worker running several
        # repetitions in threads at once the counts can be attributed to the
        # wrong one (the built-in LocalCluster runs one thread per worker).
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            learner = _fit_learner(_learner(method, case, rng_seed, counts), split)
        seconds = time.perf_counter() - start
        history = learner.history_
        counts[method.name] = history.totals["n_inspections"]
        queries.append(_query_frame(learner, split, method, repetition))
        final = history.queries.iloc[-1]
        totals.append(
            {
                "repetition": repetition,
                "method": method.name,
                **history.totals,
                "n_warnings": len(caught),
                "warnings": warning_counts(caught),
                "final_decision_accuracy": final["decision_accuracy"],
                "final_f1_macro": final["f1_macro"],
                "n_initial": int(split.initial_indices.size),
                "seconds": seconds,
            }
        )
    return Bunch(
        queries=pd.concat(queries, ignore_index=True),
        totals=pd.DataFrame(totals),
    )


def replay_repetition(
    case, method, repetition: int, *, seed: int = 0, methods=None
) -> Bunch:
    """Run one method of one repetition again and keep its models.

    A study stores numbers only; the figures of a single run (the model and
    its EVPI surface before and after learning, the labelled set) need the
    fitted models, which this recomputes. The split, and so the run, is the
    one :func:`run_repetition` made for the same ``seed`` and ``repetition``.

    Parameters
    ----------
    case : CaseStudy or str
        The case study.
    method : Method or str
        The method to replay. A random method first replays the EVPI method
        it matches, to know how many inspections to make.
    repetition : int
        Index of the repetition.
    seed : int, default=0
        Seed of the study.
    methods : sequence of Method or str, default=None
        The study's methods, searched for the method a random one matches
        (built-in names are found without them).

    Returns
    -------
    replay : Bunch
        ``split`` (as :meth:`CaseStudy.split`), ``process``, ``learner`` (the
        fitted :class:`~skrbal.active.RiskBasedLearner`, scored on the test
        set as in the study) and ``initial_estimator`` (the model fitted to
        the initial labelled set only, before any inspection).

    Examples
    --------
    >>> from sklearn.naive_bayes import GaussianNB
    >>> from skrbal.experiments import Method, replay_repetition, run_repetition
    >>> nb = Method("nb", GaussianNB)
    >>> replay = replay_repetition("synthetic", nb, 2)
    >>> result = run_repetition("synthetic", [nb], 2)
    >>> replay.learner.history_.totals["n_inspections"] == int(
    ...     result.totals["n_inspections"].iloc[0])
    True
    >>> n_initial = replay.split.initial_indices.size
    >>> bool(replay.initial_estimator.class_count_.sum() == n_initial)
    True
    """
    case = get_case_study(case) if isinstance(case, str) else case
    method = get_method(method)
    known = {m.name: m for m in (get_method(m) for m in (methods or ()))}
    process = case.process()
    rng_seed = repetition_seed(seed, repetition)
    split = case.split(random_state=rng_seed)
    counts: dict[str, int] = {}
    if method.query == "random":
        matched = known.get(method.matched_to) or get_method(method.matched_to)
        reference = _fit_learner(
            _learner(matched, case, rng_seed, counts), split, test=False
        )
        counts[matched.name] = reference.history_.totals["n_inspections"]
    learner = _fit_learner(_learner(method, case, rng_seed, counts), split)
    # The same learner told to inspect nothing keeps its initial fit, made
    # exactly as in the run (process classes, semi-supervised preparation).
    initial = _learner(method, case, rng_seed, counts).set_params(
        strategy="random", budget=None, n_queries=0
    )
    initial = _fit_learner(initial, split, test=False)
    return Bunch(
        split=split,
        process=process,
        learner=learner,
        initial_estimator=initial.estimator_,
    )


# ---------------------------------------------------------------------- #
# the study
# ---------------------------------------------------------------------- #
def _method_config(method: Method, case: CaseStudy) -> dict:
    # Built as every run builds it: the case's parameters included, and
    # refused here, before anything runs, if they do not apply.
    estimator = method.estimator(case)
    case_params = case.method_params.get(method.name, {})
    return {
        # The reprs are for people reading config.json and the report; they
        # are shortened for long parameters, so the fingerprint (canonical
        # JSON, every number) is what a resumed study must match.
        "estimator": repr(estimator),
        "case_params": {k: repr(v) for k, v in case_params.items()},
        "query": method.query,
        "matched_to": method.matched_to,
        "learner_params": {k: repr(v) for k, v in method.learner_params.items()},
        "fingerprint": fingerprint(
            {
                "estimator": estimator,
                "case_params": case_params,
                "learner_params": method.learner_params,
            }
        ),
    }


def _config(case: CaseStudy, methods, n_repeats: int, seed: int) -> dict:
    return {
        "format_version": FORMAT_VERSION,
        "case": case.name,
        "case_description": case.description,
        "data_source": case.source,
        "labelling": case.labelling,
        "initial_size": case.initial_size,
        "test_size": case.test_size,
        "standardise": case.standardise,
        # Only when set, so the configuration of every other study (and its
        # resume check) is what it was.
        **(
            {"standardise_window": case.standardise_window}
            if case.standardise_window is not None
            else {}
        ),
        "methods": {m.name: _method_config(m, case) for m in methods},
        "n_repeats": n_repeats,
        "seed": seed,
    }


def _environment() -> dict:
    return {
        "python": platform.python_version(),
        "numpy": np.__version__,
        "scikit-learn": sklearn.__version__,
        "pandas": pd.__version__,
    }


@contextlib.contextmanager
def _backend(n_jobs: int, scheduler):
    if scheduler is None:
        with parallel_backend("loky", n_jobs=n_jobs):
            yield
        return
    try:
        from dask.distributed import Client, LocalCluster
    except ImportError as exc:  # pragma: no cover - depends on the install
        raise ImportError(
            "a Dask scheduler needs dask.distributed: pip install 'skrbal[parallel]'"
        ) from exc
    with contextlib.ExitStack() as stack:
        if scheduler == "local":
            cluster = stack.enter_context(
                LocalCluster(
                    n_workers=max(n_jobs, 1),
                    threads_per_worker=1,
                    processes=True,
                    dashboard_address=None,
                )
            )
            client = stack.enter_context(Client(cluster))
        elif isinstance(scheduler, str):
            client = stack.enter_context(Client(scheduler))
        else:
            client = scheduler  # an existing Client
        with parallel_backend("dask", client=client):
            yield


def run_study(
    case="synthetic",
    methods=("gmm-evpi", "gmm-random"),
    n_repeats: int = 5,
    *,
    seed: int = 0,
    n_jobs: int = 1,
    scheduler=None,
    out=None,
    resume: bool = False,
    overwrite: bool = False,
    progress: bool = True,
) -> Bunch:
    """Repeat every method on fresh splits of a case study, in parallel.

    Repetition ``r`` uses a seed derived from ``(seed, r)`` only, so results do
    not depend on ``n_jobs``, the backend or the order in which repetitions
    finish. With ``out``, every finished repetition is written at once, as one
    file replaced atomically: an interrupted study loses only the repetitions
    that were running, and ``resume=True`` runs just the missing ones.

    The folder is treated as a database. Its ``config.json`` says what the
    study is; nothing in the folder is reused unless it matches (a folder
    with results but no ``config.json`` is refused). Each repetition file
    names its study and repetition and is checked when read; on resuming, a
    file that is unreadable or incomplete is computed again, with a
    :class:`StudyFileWarning`. Numbers are stored at full precision, so a
    resumed study equals an uninterrupted one exactly (all but the
    ``seconds`` column). The folder is locked while the study runs: a second
    run into it raises ``BlockingIOError`` instead of corrupting it. Files
    are created with the permissions of the user's umask.

    Parameters
    ----------
    case : CaseStudy or str, default='synthetic'
        The case study.
    methods : sequence of Method or str, default=('gmm-evpi', 'gmm-random')
        Methods to compare: built-in names (see :func:`available_methods`)
        or :class:`Method` objects wrapping any scikit-learn classifier with
        ``predict_proba``, Pipelines included (the ``skrbal`` command offers
        the built-ins only; other estimators go through this function).
    n_repeats : int, default=5
        Number of repetitions. Resuming with fewer repetitions than a folder
        holds gives the first ``n_repeats`` of them; ``config.json``,
        ``totals.csv``, ``queries.csv`` and :func:`load_study` all describe
        that study, and the files of the higher repetitions stay on disk,
        unread, to be reused if the study is resumed with more.
    seed : int, default=0
        Seed of the study, a non-negative integer.
    n_jobs : int, default=1
        Parallel workers (joblib's loky processes, or Dask workers with
        ``scheduler='local'``).
    scheduler : None, 'local', str or distributed.Client, default=None
        ``None`` runs on joblib's loky backend; ``'local'`` starts a Dask
        ``LocalCluster`` of ``n_jobs`` worker processes; an address such as
        ``'tcp://10.0.0.5:8786'`` or a ``Client`` runs on that cluster
        through joblib's Dask backend.
    out : str or Path, default=None
        Folder for ``config.json``, one file per repetition and the tidy
        ``queries.csv`` and ``totals.csv``.
    resume : bool, default=False
        Continue a study in ``out``; its configuration must match. Without
        it (and without ``overwrite``) a folder that holds a study is
        refused with ``FileExistsError``.
    overwrite : bool, default=False
        Replace the study in ``out``: its ``config.json``, repetition files
        and tidy CSV files are deleted first (other files are left alone).
        Excludes ``resume``.
    progress : bool, default=True
        Show a progress bar with the estimated time left.

    Returns
    -------
    study : Bunch
        ``queries`` and ``totals`` (DataFrames over all repetitions, sorted by
        repetition and method, as :func:`run_repetition` describes) and
        ``config`` (dict).

    Raises
    ------
    ValueError
        If an argument is invalid, or ``out`` holds another study (its
        configuration differs) or an unreadable ``config.json``.
    FileExistsError
        If ``out`` holds results and neither ``resume`` nor ``overwrite`` is
        given, or holds results without a ``config.json``.
    BlockingIOError
        If another run is writing into ``out``.

    See Also
    --------
    load_study : Read a study's folder, finished or not.
    replay_repetition : One run again, with its fitted models.

    Examples
    --------
    >>> from sklearn.naive_bayes import GaussianNB
    >>> from skrbal.experiments import Method, run_study
    >>> study = run_study("synthetic", [Method("nb", GaussianNB)], n_repeats=2,
    ...                   progress=False)
    >>> study.totals["repetition"].tolist()
    [0, 1]

    Any classifier with ``predict_proba`` can be studied, e.g. a Pipeline:

    >>> from functools import partial
    >>> from sklearn.linear_model import LogisticRegression
    >>> from sklearn.pipeline import make_pipeline
    >>> from sklearn.preprocessing import StandardScaler
    >>> logistic = LogisticRegression(solver="newton-cholesky")
    >>> make = partial(make_pipeline, StandardScaler(), logistic)
    >>> logistic = Method("logistic-evpi", make)
    >>> study = run_study("synthetic", [logistic], n_repeats=1, progress=False)
    >>> study.totals["method"].tolist()
    ['logistic-evpi']
    """
    case = get_case_study(case) if isinstance(case, str) else case
    methods = [get_method(m) for m in methods]
    if not methods:
        raise ValueError("methods must hold at least one method, got none.")
    methods = _ordered(methods)
    if len({m.name for m in methods}) != len(methods):
        raise ValueError("method names must be distinct.")
    n_repeats = check_int(n_repeats, "n_repeats", minimum=1)
    # SeedSequence takes non-negative integers only.
    seed = check_int(seed, "seed", minimum=0)
    config = _config(case, methods, n_repeats, seed)
    with contextlib.ExitStack() as stack:
        results: dict[int, Bunch] = {}
        if out is not None:
            out = Path(out)
            stack.enter_context(folder_lock(out))
            results = open_study(out, config, resume=resume, overwrite=overwrite)
        elif resume or overwrite:
            raise ValueError("resume and overwrite need an output folder, out.")
        # Connect to the scheduler before the folder is written to, so an
        # unreachable cluster leaves no half-started study behind.
        stack.enter_context(_backend(n_jobs, scheduler))
        if out is not None:
            (out / "repetitions").mkdir(exist_ok=True)
            atomic_write_text(
                out / "config.json",
                json.dumps({**config, "environment": _environment()}, indent=2),
            )
        todo = [r for r in range(n_repeats) if r not in results]
        bar = stack.enter_context(
            tqdm(
                total=n_repeats,
                initial=n_repeats - len(todo),
                desc=f"{case.name}: repetitions",
                disable=not progress,
                unit="rep",
            )
        )
        stream = Parallel(return_as="generator_unordered")(
            delayed(_indexed_repetition)(case, methods, r, seed) for r in todo
        )
        for repetition, result in stream:
            if out is not None:
                atomic_write_text(
                    rep_path(out, repetition),
                    repetition_payload(result, repetition, config),
                )
            results[repetition] = result
            bar.update()

        study = combine(results, config)
        if out is not None:
            atomic_write_text(out / "queries.csv", study.queries.to_csv(index=False))
            atomic_write_text(out / "totals.csv", study.totals.to_csv(index=False))
    return study


def _indexed_repetition(case, methods, repetition, seed):
    return repetition, run_repetition(case, methods, repetition, seed=seed)
