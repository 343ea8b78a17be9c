"""Repeated risk-based active-learning studies on joblib or Dask, resumable."""

from __future__ import annotations

import contextlib
import json
import os
import platform
import tempfile
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pandas as pd
import sklearn
from joblib import Parallel, delayed, parallel_backend
from sklearn.utils import Bunch
from tqdm.auto import tqdm

from skrbal.active import RiskBasedLearner
from skrbal.experiments._cases import CaseStudy, get_case_study
from skrbal.experiments._methods import Method, get_method

__all__ = ["load_study", "run_repetition", "run_study"]

_FORMAT_VERSION = 1


def repetition_seed(seed: int, repetition: int) -> int:
    """Seed of one repetition, independent of scheduling and worker count."""
    return int(np.random.SeedSequence([seed, repetition]).generate_state(1)[0])


def _ordered(methods: Sequence[Method]) -> list[Method]:
    """EVPI methods first, so a random method can match their counts."""
    names = {m.name for m in methods}
    for method in methods:
        if method.query == "random" and method.matched_to not in names:
            raise ValueError(
                f"method {method.name!r} matches the inspections of "
                f"{method.matched_to!r}, which is not in the study."
            )
    return sorted(methods, key=lambda m: m.query == "random")


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
        ``history_.queries`` with ``repetition`` and ``method`` columns);
        ``totals``: one row per method (campaign totals, final test scores).
        The ``step`` column of ``queries`` is each query's stream position.

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
    process = case.process()
    rng_seed = repetition_seed(seed, repetition)
    split = case.split(random_state=rng_seed)
    counts: dict[str, int] = {}
    queries, totals = [], []
    for method in methods:
        params = dict(method.learner_params)
        if method.query == "random":
            params.update(
                query="random",
                n_queries=counts[method.matched_to],
                random_state=rng_seed + 1,
            )
        learner = RiskBasedLearner(
            estimator=method.estimator(), process=process, **params
        )
        fit_kwargs = {}
        if "semi_supervised" in params:
            fit_kwargs["actions"] = split.actions_stream
        learner.fit(
            split.X_stream,
            split.y_stream,
            initial=split.initial_indices,
            X_test=split.X_test,
            y_test=split.y_test,
            **fit_kwargs,
        )
        history = learner.history_
        counts[method.name] = history.totals["n_inspections"]
        frame = history.queries.copy()
        frame.insert(0, "method", method.name)
        frame.insert(0, "repetition", repetition)
        queries.append(frame)
        final = history.queries.iloc[-1]
        totals.append(
            {
                "repetition": repetition,
                "method": method.name,
                **history.totals,
                "final_decision_accuracy": final["decision_accuracy"],
                "final_f1_macro": final["f1_macro"],
                "n_initial": int(split.initial_indices.size),
            }
        )
    return Bunch(
        queries=pd.concat(queries, ignore_index=True),
        totals=pd.DataFrame(totals),
    )


# ---------------------------------------------------------------------- #
# persistence
# ---------------------------------------------------------------------- #
def _atomic_write_text(path: Path, text: str) -> None:
    """Write ``text`` so that ``path`` is either absent or complete."""
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    try:
        with os.fdopen(fd, "w") as handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise


def _rep_path(out: Path, repetition: int) -> Path:
    return out / "repetitions" / f"rep-{repetition:05d}.json"


def _save_repetition(out: Path, repetition: int, result: Bunch) -> None:
    payload = {
        name: json.loads(frame.to_json(orient="split", index=False))
        for name, frame in (("queries", result.queries), ("totals", result.totals))
    }
    _atomic_write_text(_rep_path(out, repetition), json.dumps(payload))


def _load_repetition(path: Path) -> Bunch:
    payload = json.loads(path.read_text())
    return Bunch(
        **{
            name: pd.DataFrame(part["data"], columns=part["columns"])
            for name, part in payload.items()
        }
    )


def _config(case: CaseStudy, methods, n_repeats: int, seed: int) -> dict:
    return {
        "format_version": _FORMAT_VERSION,
        "case": case.name,
        "case_description": case.description,
        "initial_size": case.initial_size,
        "test_size": case.test_size,
        "standardise": case.standardise,
        "methods": {
            m.name: {
                "estimator": repr(m.estimator()),
                "query": m.query,
                "matched_to": m.matched_to,
                "learner_params": {k: repr(v) for k, v in m.learner_params.items()},
            }
            for m in methods
        },
        "n_repeats": n_repeats,
        "seed": seed,
    }


def _check_resume(out: Path, config: dict, resume: bool) -> list[int]:
    config_path = out / "config.json"
    done = sorted(
        int(p.stem.split("-")[1]) for p in (out / "repetitions").glob("rep-*.json")
    )
    if config_path.exists():
        saved = json.loads(config_path.read_text())
        saved_core = {k: v for k, v in saved.items() if k not in ("environment",)}
        if not resume:
            raise FileExistsError(
                f"{out} already holds a study; pass resume=True (--resume) to "
                "continue it or choose another output folder."
            )
        mismatch = {
            key
            for key in config
            if key != "n_repeats" and saved_core.get(key) != config[key]
        }
        if mismatch:
            raise ValueError(
                f"cannot resume {out}: its configuration differs in {sorted(mismatch)}."
            )
    return done


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
    progress: bool = True,
) -> Bunch:
    """Repeat every method on fresh splits of a case study, in parallel.

    Repetition ``r`` uses a seed derived from ``(seed, r)`` only, so results do
    not depend on ``n_jobs``, the backend or the order in which repetitions
    finish. With ``out``, every finished repetition is written at once, as one
    file replaced atomically: an interrupted study loses only the repetitions
    that were running, and ``resume=True`` runs just the missing ones.

    Parameters
    ----------
    case : CaseStudy or str, default='synthetic'
        The case study.
    methods : sequence of Method or str, default=('gmm-evpi', 'gmm-random')
        Methods to compare (see :func:`available_methods`).
    n_repeats : int, default=5
        Number of repetitions.
    seed : int, default=0
        Seed of the study.
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
        Continue a study in ``out``; its configuration must match.
    progress : bool, default=True
        Show a progress bar with the estimated time left.

    Returns
    -------
    study : Bunch
        ``queries`` and ``totals`` (DataFrames over all repetitions, sorted by
        repetition and method) and ``config`` (dict).

    Examples
    --------
    >>> from sklearn.naive_bayes import GaussianNB
    >>> from skrbal.experiments import Method, run_study
    >>> study = run_study("synthetic", [Method("nb", GaussianNB)], n_repeats=2,
    ...                   progress=False)
    >>> study.totals["repetition"].tolist()
    [0, 1]
    """
    case = get_case_study(case) if isinstance(case, str) else case
    methods = _ordered([get_method(m) for m in methods])
    if len({m.name for m in methods}) != len(methods):
        raise ValueError("method names must be distinct.")
    if int(n_repeats) < 1:
        raise ValueError(f"n_repeats must be >= 1, got {n_repeats}.")
    config = _config(case, methods, int(n_repeats), int(seed))
    results: dict[int, Bunch] = {}
    todo = list(range(n_repeats))
    if out is not None:
        out = Path(out)
        (out / "repetitions").mkdir(parents=True, exist_ok=True)
        done = _check_resume(out, config, resume)
        _atomic_write_text(
            out / "config.json",
            json.dumps({**config, "environment": _environment()}, indent=2),
        )
        for repetition in done:
            if repetition < n_repeats:
                results[repetition] = _load_repetition(_rep_path(out, repetition))
        todo = [r for r in todo if r not in results]

    bar = tqdm(
        total=n_repeats,
        initial=n_repeats - len(todo),
        desc=f"{case.name}: repetitions",
        disable=not progress,
        unit="rep",
    )
    with bar, _backend(n_jobs, scheduler):
        stream = Parallel(return_as="generator_unordered")(
            delayed(_indexed_repetition)(case, methods, r, seed) for r in todo
        )
        for repetition, result in stream:
            if out is not None:
                _save_repetition(out, repetition, result)
            results[repetition] = result
            bar.update()

    study = _combine(results, config)
    if out is not None:
        _atomic_write_text(out / "queries.csv", study.queries.to_csv(index=False))
        _atomic_write_text(out / "totals.csv", study.totals.to_csv(index=False))
    return study


def _indexed_repetition(case, methods, repetition, seed):
    return repetition, run_repetition(case, methods, repetition, seed=seed)


def _combine(results: dict[int, Bunch], config: dict) -> Bunch:
    order = sorted(results)
    queries = pd.concat([results[r].queries for r in order], ignore_index=True)
    totals = pd.concat([results[r].totals for r in order], ignore_index=True)
    return Bunch(queries=queries, totals=totals, config=config)


def load_study(out) -> Bunch:
    """Load a study written by :func:`run_study` (finished or interrupted).

    Parameters
    ----------
    out : str or Path
        The study's folder.

    Returns
    -------
    study : Bunch
        ``queries``, ``totals`` and ``config``, from every repetition saved.

    Examples
    --------
    >>> import tempfile
    >>> from sklearn.naive_bayes import GaussianNB
    >>> from skrbal.experiments import Method, load_study, run_study
    >>> folder = tempfile.mkdtemp()
    >>> _ = run_study("synthetic", [Method("nb", GaussianNB)], n_repeats=1,
    ...               out=folder, progress=False)
    >>> len(load_study(folder).totals)
    1
    """
    out = Path(out)
    config_path = out / "config.json"
    if not config_path.exists():
        raise FileNotFoundError(f"no study in {out}: config.json is missing.")
    config = json.loads(config_path.read_text())
    paths = sorted((out / "repetitions").glob("rep-*.json"))
    if not paths:
        raise FileNotFoundError(f"the study in {out} has no finished repetition.")
    results = {int(p.stem.split("-")[1]): _load_repetition(p) for p in paths}
    return _combine(results, config)
