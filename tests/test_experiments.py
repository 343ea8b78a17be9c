import json
import os
import signal
import subprocess
import sys
import time
from dataclasses import replace
from functools import partial
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from sklearn.linear_model import LogisticRegression
from sklearn.naive_bayes import GaussianNB
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.utils import Bunch

import skrbal
from skrbal import synthetic_decision_process
from skrbal.datasets import load_z24, make_degradation_stream, make_z24_like
from skrbal.experiments import (
    Method,
    available_methods,
    campaign_case,
    get_case_study,
    get_method,
    load_study,
    replay_repetition,
    run_repetition,
    run_study,
    study_report,
)

NB = Method("nb-evpi", GaussianNB)
NB_RANDOM = Method("nb-random", GaussianNB, query="random", matched_to="nb-evpi")


def deterministic(frame: pd.DataFrame) -> pd.DataFrame:
    """Everything but the wall-clock time, which no two runs share."""
    return frame.drop(columns="seconds", errors="ignore")


def assert_same_study(a, b):
    """Equal to the last bit on every column but the wall-clock time."""
    pd.testing.assert_frame_equal(
        deterministic(a.totals), deterministic(b.totals), check_exact=True
    )
    pd.testing.assert_frame_equal(a.queries, b.queries, check_exact=True)


def test_evpi_beats_random_on_the_synthetic_stream():
    """The paper's headline: same number of inspections, better decisions."""
    study = run_study(
        "synthetic", ["gmm-evpi", "gmm-random"], n_repeats=12, progress=False
    )
    totals = study.totals.set_index(["method", "repetition"])
    evpi = totals.loc["gmm-evpi"]
    random = totals.loc["gmm-random"]
    np.testing.assert_array_equal(evpi["n_inspections"], random["n_inspections"])
    assert evpi["n_inspections"].median() >= 3
    margin = (
        evpi["final_decision_accuracy"].median()
        - random["final_decision_accuracy"].median()
    )
    assert margin > 0.02
    assert evpi["regret"].mean() < random["regret"].mean()


def test_repetition_is_reproducible_and_matched():
    a = run_repetition("synthetic", [NB_RANDOM, NB], 3, seed=1)
    b = run_repetition("synthetic", [NB, NB_RANDOM], 3, seed=1)
    pd.testing.assert_frame_equal(deterministic(a.totals), deterministic(b.totals))
    assert (a.totals["seconds"] > 0).all()
    assert a.totals["method"].tolist() == ["nb-evpi", "nb-random"]
    counts = a.totals.set_index("method")["n_inspections"]
    assert counts["nb-evpi"] == counts["nb-random"]


def test_same_results_whatever_n_jobs():
    serial = run_study("synthetic", [NB], n_repeats=3, n_jobs=1, progress=False)
    parallel = run_study("synthetic", [NB], n_repeats=3, n_jobs=2, progress=False)
    assert_same_study(serial, parallel)


def test_results_are_saved_and_resumed(tmp_path, read_tidy_csv):
    first = run_study("synthetic", [NB], n_repeats=2, out=tmp_path, progress=False)
    saved = sorted(p.name for p in (tmp_path / "repetitions").iterdir())
    assert saved == ["rep-00000.json", "rep-00001.json"]
    config = json.loads((tmp_path / "config.json").read_text())
    assert config["case"] == "synthetic" and "environment" in config
    with pytest.raises(FileExistsError, match="resume"):
        run_study("synthetic", [NB], n_repeats=2, out=tmp_path, progress=False)
    # Delete one finished repetition: resuming recomputes only that one.
    (tmp_path / "repetitions" / "rep-00001.json").unlink()
    stamp = (tmp_path / "repetitions" / "rep-00000.json").stat().st_mtime_ns
    more = run_study(
        "synthetic", [NB], n_repeats=3, out=tmp_path, resume=True, progress=False
    )
    assert (tmp_path / "repetitions" / "rep-00000.json").stat().st_mtime_ns == stamp
    fresh = run_study("synthetic", [NB], n_repeats=3, progress=False)
    assert_same_study(more, fresh)
    assert_same_study(load_study(tmp_path), fresh)
    pd.testing.assert_frame_equal(
        deterministic(first.totals),
        deterministic(fresh.totals.iloc[:2]),
        check_exact=True,
    )
    # The tidy CSV files hold the same numbers, and the configuration is
    # complete enough to rerun the study.
    pd.testing.assert_frame_equal(
        deterministic(read_tidy_csv(tmp_path / "totals.csv")),
        deterministic(fresh.totals),
        check_exact=True,
    )
    assert len(pd.read_csv(tmp_path / "queries.csv")) == len(fresh.queries)
    config = json.loads((tmp_path / "config.json").read_text())
    assert config["n_repeats"] == 3 and config["seed"] == 0
    assert config["methods"]["nb-evpi"]["estimator"] == "GaussianNB()"
    assert config["data_source"] == "make_degradation_stream(random_state=0)"
    assert config["initial_size"] == 0.002 and config["test_size"] == 0.5
    with pytest.raises(ValueError, match="differs in"):
        run_study("z24", [NB], n_repeats=3, out=tmp_path, resume=True, progress=False)


def test_bad_configurations():
    with pytest.raises(ValueError, match="unknown case study"):
        get_case_study("moon")
    with pytest.raises(ValueError, match="unknown method"):
        get_method("magic")
    with pytest.raises(ValueError, match="needs matched_to"):
        Method("r", GaussianNB, query="random")
    with pytest.raises(ValueError, match="which is not in the study"):
        run_study("synthetic", [NB_RANDOM], n_repeats=1, progress=False)
    with pytest.raises(ValueError, match="distinct"):
        run_study("synthetic", [NB, NB], n_repeats=1, progress=False)
    assert {"gmm-evpi", "gmm-random"} <= set(available_methods())


def test_z24_case_is_standardised():
    case = get_case_study("z24")
    split = case.split(random_state=0)
    X = np.concatenate([split.X_stream, split.X_test])
    np.testing.assert_allclose(X.mean(axis=0), 0, atol=1e-12)
    assert case.process().inspection_cost == 30


def test_queries_locate_inspections_in_the_record():
    result = run_repetition("synthetic", [NB], 4, seed=2)
    from skrbal.experiments._runner import repetition_seed

    split = get_case_study("synthetic").split(random_state=repetition_seed(2, 4))
    queries = result.queries
    initial, inspections = queries.iloc[0], queries.iloc[1:]
    assert initial["step"] == -1 and initial["record_index"] == -1
    np.testing.assert_array_equal(
        inspections["record_index"], split.stream_indices[inspections["step"]]
    )
    np.testing.assert_array_equal(
        inspections["label"].astype(int), split.y_stream[inspections["step"]]
    )


def test_replay_gives_the_run_of_the_study_and_its_models():
    result = run_repetition("synthetic", [NB, NB_RANDOM], 1, seed=3)
    for method in (NB, NB_RANDOM):
        replay = replay_repetition(
            "synthetic", method, 1, seed=3, methods=[NB, NB_RANDOM]
        )
        expected = result.queries[result.queries["method"] == method.name]
        expected = expected.drop(columns=["repetition", "method", "record_index"])
        pd.testing.assert_frame_equal(
            replay.learner.history_.queries,
            expected.reset_index(drop=True),
            check_dtype=False,
        )
        initial = replay.initial_estimator
        assert initial.class_count_.sum() == replay.split.initial_indices.size
        proba = initial.predict_proba(replay.split.X_test)
        accuracy = np.mean(
            replay.process.optimal_action(proba, classes=initial.classes_)
            == replay.process.perfect_information_action(replay.split.y_test)
        )
        assert accuracy == pytest.approx(expected["decision_accuracy"].iloc[0])
    with pytest.raises(ValueError, match="unknown method"):
        replay_repetition("synthetic", NB_RANDOM, 1, seed=3)


def test_any_sklearn_classifier_through_the_python_api():
    """A Pipeline the CLI cannot name runs through run_study, matched by random."""
    # No classes parameter, no partial_fit: refitted at every inspection, and
    # its probability columns are mapped onto the process's states.
    make = partial(
        make_pipeline, StandardScaler(), LogisticRegression(solver="newton-cholesky")
    )
    logistic = Method("logistic-evpi", make)
    random = Method(
        "logistic-random",
        make,
        query="random",
        matched_to="logistic-evpi",
    )
    study = run_study("synthetic", [random, logistic], n_repeats=2, progress=False)
    totals = study.totals.set_index(["method", "repetition"])
    np.testing.assert_array_equal(
        totals.loc["logistic-evpi", "n_inspections"],
        totals.loc["logistic-random", "n_inspections"],
    )
    assert totals["final_decision_accuracy"].between(0, 1).all()
    assert "LogisticRegression" in study.config["methods"]["logistic-evpi"]["estimator"]


@pytest.fixture(scope="module")
def z24_file(tmp_path_factory):
    """A Z24-like record written as the CSV that load_z24 reads (3932 rows)."""
    X, _, _ = make_z24_like(random_state=5)
    path = tmp_path_factory.mktemp("z24") / "z24.csv"
    np.savetxt(path, X, delimiter=",", header="f1,f2,f3,f4", comments="")
    return path


def test_z24_case_from_a_file(z24_file, tmp_path):
    case = get_case_study("z24", data=z24_file)
    X, y, _ = load_z24(z24_file)
    X_record, y_record, actions = case.record()
    np.testing.assert_array_equal(y_record, y)
    np.testing.assert_allclose(X_record, (X - X.mean(axis=0)) / X.std(axis=0))
    assert not actions.any()
    split = case.split(random_state=0)
    assert split.X_stream.shape == (1966, 4) and split.initial_indices.size == 6
    assert case.process().inspection_cost == 30
    assert z24_file.name in case.description and "sha256" in case.source
    # The same record given as arrays is the same case study.
    from_arrays = get_case_study("z24", data=load_z24(z24_file))
    np.testing.assert_array_equal(
        from_arrays.split(random_state=0).y_stream, split.y_stream
    )

    study = run_study(case, [NB], n_repeats=1, out=tmp_path, progress=False)
    assert study.totals["n_initial"].tolist() == [6]
    # Resuming on other data is refused: the source is part of the config.
    other = tmp_path / "other.csv"
    np.savetxt(other, X[::-1], delimiter=",")
    with pytest.raises(ValueError, match="data_source"):
        run_study(
            get_case_study("z24", data=other),
            [NB],
            n_repeats=1,
            out=tmp_path,
            resume=True,
            progress=False,
        )


def test_z24_case_from_a_file_rejects_damage_onset_zero(z24_file):
    # 0 is not "not given": the file must not fall back to the paper's onset.
    with pytest.raises(ValueError, match="damage_onset"):
        get_case_study("z24", data=z24_file, damage_onset=0)
    with pytest.raises(ValueError, match="damage_onset"):
        get_case_study("z24", damage_onset=0)


def test_z24_case_rejects_bad_data(tmp_path):
    with pytest.raises(FileNotFoundError, match="not found"):
        get_case_study("z24", data=tmp_path / "missing.csv")
    # The synthetic case reads a rig recording now (issue 13): a missing one.
    with pytest.raises(FileNotFoundError, match="campaign file not found"):
        get_case_study("synthetic", data=tmp_path / "missing.csv")
    with pytest.raises(ValueError, match="options of the 'z24' case study"):
        get_case_study("synthetic", damage_onset=3462)
    with pytest.raises(ValueError, match="tuple"):
        get_case_study("z24", data=3)
    with pytest.raises(ValueError, match="shape"):
        get_case_study("z24", data=(np.zeros((5, 4)), np.ones(4), np.zeros(5)))
    short = tmp_path / "short.csv"
    X = np.random.default_rng(0).normal(size=(100, 4))
    np.savetxt(short, X, delimiter=",")
    with pytest.raises(ValueError, match="damage_onset"):
        get_case_study("z24", data=short)
    # A constant feature cannot be standardised: named, not NaN everywhere.
    X, y, actions = make_z24_like(random_state=0)
    X[:, 1] = 5.0
    with pytest.raises(ValueError, match=r"feature 1 .*arrays of shape.*constant"):
        get_case_study("z24", data=(X, y, actions))


def test_local_dask_cluster_gives_the_serial_results(z24_file):
    """Two Dask worker processes, same numbers as one process."""
    pytest.importorskip("dask.distributed")
    case = get_case_study("z24", data=z24_file)
    serial = run_study(case, [NB, NB_RANDOM], n_repeats=3, n_jobs=1, progress=False)
    dask = run_study(
        case,
        [NB, NB_RANDOM],
        n_repeats=3,
        n_jobs=2,
        scheduler="local",
        progress=False,
    )
    assert_same_study(serial, dask)


def test_dask_cluster_by_address_runs_on_its_workers():
    distributed = pytest.importorskip("dask.distributed")
    with (
        distributed.LocalCluster(
            n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None
        ) as cluster,
        distributed.Client(cluster) as client,
    ):
        workers = client.run(os.getpid)
        assert len(set(workers.values()) - {os.getpid()}) == 2
        with distributed.get_task_stream(client) as tasks:
            study = run_study(
                "synthetic",
                [NB],
                n_repeats=3,
                scheduler=cluster.scheduler_address,
                progress=False,
            )
    ran_on = {task["worker"] for task in tasks.data}
    assert ran_on and ran_on <= set(workers)
    assert len(tasks.data) >= 3
    assert_same_study(study, run_study("synthetic", [NB], n_repeats=3, progress=False))


_INTERRUPTIBLE = """
import sys
from sklearn.naive_bayes import GaussianNB
from skrbal.experiments import Method, run_study

# block_size=1 changes only the speed: the learner predicts in tiny blocks, so
# a repetition takes long enough to be interrupted between two of them.
method = Method("nb-evpi", GaussianNB, learner_params={"block_size": 1})
run_study("synthetic", [method], n_repeats=int(sys.argv[2]), out=sys.argv[1],
          resume=len(sys.argv) > 3, progress=False)
"""


def test_killed_study_resumes_to_the_uninterrupted_result(tmp_path):
    """SIGKILL after the first repetition is saved; resume; compare."""
    script = tmp_path / "study.py"
    script.write_text(_INTERRUPTIBLE)
    out, n_repeats = tmp_path / "study", 5
    # The script imports the skrbal under test, wherever it is installed.
    env = {**os.environ, "PYTHONPATH": str(Path(skrbal.__file__).parents[1])}
    process = subprocess.Popen(
        [sys.executable, str(script), str(out), str(n_repeats)], env=env
    )
    first = out / "repetitions" / "rep-00000.json"
    deadline = time.monotonic() + 120
    try:
        while not first.exists():
            assert process.poll() is None, "the study ended before it was killed"
            assert time.monotonic() < deadline, "no repetition saved in 120 s"
            time.sleep(0.01)
        process.send_signal(signal.SIGKILL)
    finally:
        process.wait(timeout=60)
    assert process.returncode == -signal.SIGKILL
    saved = sorted((out / "repetitions").glob("rep-*.json"))
    assert 1 <= len(saved) < n_repeats, "the kill came too late to test resuming"
    assert not (out / "totals.csv").exists()
    # What was saved is complete and loads.
    assert len(load_study(out).totals) == len(saved)
    stamps = {p.name: p.stat().st_mtime_ns for p in saved}

    method = Method("nb-evpi", GaussianNB, learner_params={"block_size": 1})
    resumed = run_study(
        "synthetic",
        [method],
        n_repeats=n_repeats,
        out=out,
        resume=True,
        progress=False,
    )
    for name, stamp in stamps.items():  # finished work was kept, not redone
        assert (out / "repetitions" / name).stat().st_mtime_ns == stamp
    assert not list((out / "repetitions").glob(".rep-*"))
    uninterrupted = run_study(
        "synthetic", [method], n_repeats=n_repeats, progress=False
    )
    assert_same_study(resumed, uninterrupted)
    assert_same_study(load_study(out), uninterrupted)


# ---------------------------------------------------------------------- #
# parameters a case study declares for its methods
# ---------------------------------------------------------------------- #
def _rig_table():
    X, y, actions = make_degradation_stream(2, 300, random_state=3)
    return pd.DataFrame({"f1": X[:, 0], "f2": X[:, 1], "label": y, "action": actions})


@pytest.mark.parametrize("name", ["mrvm1-evpi", "mrvm2-evpi"])
def test_built_in_cases_keep_their_kernel_widths(name):
    # The results of the built-in studies are pinned: the synthetic case's
    # mRVMs at the width 0.05 it declares, Z24's at the paper's 1/D with the
    # linear term it declares (beliefs beyond the cold states' last
    # relevance vector; benchmarks/results/rvm_hard_cases.md).
    synthetic, z24 = get_case_study("synthetic"), get_case_study("z24")
    assert synthetic.method_params[name] == {"gamma": 0.05}
    assert z24.method_params[name] == {"linear_term": 0.1}
    assert get_case_study("z24-hard").method_params[name] == {"linear_term": 0.1}
    method = get_method(name)
    assert method.estimator(synthetic).gamma == 0.05
    assert method.estimator(z24).gamma is None
    assert method.estimator(z24).linear_term == 0.1
    assert method.estimator().linear_term == 0
    assert method.estimator().gamma is None
    assert method.estimator(synthetic).random_state == 0


def test_a_renamed_or_own_case_does_not_get_the_synthetic_width(tmp_path):
    mrvm = get_method("mrvm2-evpi")
    # The width travels with the case, not with its name: renamed, the
    # synthetic case keeps it, declared and visible.
    renamed = replace(get_case_study("synthetic"), name="rig")
    assert mrvm.estimator(renamed).gamma == 0.05
    # A campaign of one's own, even named "synthetic", has the default 1/D.
    own = campaign_case(_rig_table(), synthetic_decision_process(), name="synthetic")
    assert own.method_params == {} and mrvm.estimator(own).gamma is None
    path = tmp_path / "rig.csv"
    _rig_table().to_csv(path, index=False)
    recording = get_case_study("synthetic", data=path)
    assert recording.name == "synthetic" and mrvm.estimator(recording).gamma is None
    # ... unless it declares one.
    declared = campaign_case(
        _rig_table(),
        synthetic_decision_process(),
        method_params={"mrvm2-evpi": {"gamma": 0.3}},
    )
    assert mrvm.estimator(declared).gamma == 0.3
    assert get_method("mrvm1-evpi").estimator(declared).gamma is None
    # A case's name no longer selects anything: passing one is an error.
    with pytest.raises(TypeError, match="CaseStudy"):
        mrvm.estimator("synthetic")


def test_bad_method_params():
    synthetic = get_case_study("synthetic")
    with pytest.raises(ValueError, match="method_params of case study 'synthetic'"):
        replace(synthetic, method_params={"mrvm2-evpi": 0.05})
    with pytest.raises(ValueError, match="method_params of case study 'synthetic'"):
        replace(synthetic, method_params=[("mrvm2-evpi", {"gamma": 0.05})])
    with pytest.raises(ValueError, match="method_params of case study 'synthetic'"):
        replace(synthetic, method_params={"mrvm2-evpi": {1: 0.05}})
    # A parameter the method's estimator lacks is refused before anything runs.
    case = replace(synthetic, method_params={"nb-evpi": {"gamma": 0.05}})
    with pytest.raises(ValueError, match="'synthetic' sets gamma on method 'nb-evpi'"):
        run_study(case, [NB], n_repeats=1, progress=False)
    # The declaration is copied: changing the dict given changes no case.
    params = {"nb-evpi": {"var_smoothing": 1e-3}}
    case = replace(synthetic, method_params=params)
    params["nb-evpi"]["var_smoothing"] = 1.0
    assert NB.estimator(case).var_smoothing == 1e-3


def test_case_params_are_recorded_reported_and_checked_on_resume(tmp_path):
    smooth = replace(
        get_case_study("synthetic"),
        method_params={"nb-evpi": {"var_smoothing": 1e-3}, "other": {"x": 1}},
    )
    study = run_study(smooth, [NB], n_repeats=1, out=tmp_path, progress=False)
    config = json.loads((tmp_path / "config.json").read_text())
    nb = config["methods"]["nb-evpi"]
    assert nb["case_params"] == {"var_smoothing": "0.001"}
    assert nb["estimator"] == "GaussianNB(var_smoothing=0.001)"
    assert "other" not in config["methods"]  # declared for a method not run
    report = study_report(study)
    assert (
        "- `nb-evpi`: `GaussianNB(var_smoothing=0.001)` (set by the case study: "
        "var_smoothing=0.001); inspect when EVPI exceeds the inspection cost"
    ) in report
    # The same study without the declaration is another study.
    plain = get_case_study("synthetic")
    with pytest.raises(ValueError, match=r"differs in \['methods'\]"):
        run_study(plain, [NB], n_repeats=1, out=tmp_path, resume=True, progress=False)
    plain_report = study_report(run_study(plain, [NB], n_repeats=1, progress=False))
    assert "- `nb-evpi`: `GaussianNB()`; inspect" in plain_report
    assert (
        "Estimator parameters set by the case study: none. Every estimator runs "
        "as shown, its other parameters at their defaults."
    ) in plain_report
    # A study saved before the parameters were recorded claims nothing.
    old = {**study.config, "methods": {"nb-evpi": {**nb, "case_params": None}}}
    del old["methods"]["nb-evpi"]["case_params"]
    old_report = study_report(Bunch(**{**study, "config": old}))
    assert "set by the case study: not recorded" in old_report


def test_synthetic_config_records_the_width():
    from skrbal.experiments._runner import _config

    methods = [get_method(name) for name in ("gmm-evpi", "mrvm2-evpi")]
    config = _config(get_case_study("synthetic"), methods, 1, 0)["methods"]
    assert config["mrvm2-evpi"]["case_params"] == {"gamma": "0.05"}
    assert "gamma=0.05" in config["mrvm2-evpi"]["estimator"]
    assert config["gmm-evpi"]["case_params"] == {}
    z24 = _config(get_case_study("z24"), methods, 1, 0)["methods"]
    assert z24["mrvm2-evpi"]["case_params"] == {"linear_term": "0.1"}
    assert "gamma" not in z24["mrvm2-evpi"]["estimator"]
    assert "linear_term=0.1" in z24["mrvm2-evpi"]["estimator"]


class _WarningNB(GaussianNB):
    """GaussianNB that warns at every fit, as a non-converging solver would."""

    def fit(self, X, y, sample_weight=None):
        import warnings

        warnings.warn("fit warns", RuntimeWarning, stacklevel=2)
        return super().fit(X, y, sample_weight=sample_weight)


def test_warnings_of_a_study_are_counted_not_shown(tmp_path, capsys):
    # Over 1000 repetitions the same warning used to be printed hundreds of
    # times (every catch_warnings elsewhere resets the once-per-location
    # memory) while totals' n_warnings counted only the learner's own.
    import warnings

    from skrbal.cli._study import warning_notes as _warning_notes
    from skrbal.experiments import summarise_study

    warner = Method("warner", _WarningNB)
    with warnings.catch_warnings(record=True) as shown:
        warnings.simplefilter("always")
        study = run_study(
            "synthetic", [warner, NB], n_repeats=2, progress=False, out=tmp_path
        )
    assert not shown
    totals = study.totals.set_index("method")
    fits = totals.loc["warner", "n_inspections"] + 1  # the initial fit, one per label
    np.testing.assert_array_equal(totals.loc["warner", "n_warnings"], fits)
    assert list(totals.loc["warner", "warnings"]) == [
        f"RuntimeWarning:{n}" for n in fits
    ]
    assert (totals.loc["nb-evpi", "n_warnings"] == 0).all()
    table = summarise_study(load_study(tmp_path)).warnings
    assert table.to_dict("records") == [
        {
            "method": "warner",
            "warning": "RuntimeWarning",
            "in_runs": 2,
            "of_runs": 2,
            "count": int(fits.sum()),
        }
    ]
    assert "## Warnings" in study_report(study)
    _warning_notes(study.totals)
    assert capsys.readouterr().err.splitlines() == [
        f"skrbal: note: warner raised RuntimeWarning {int(fits.sum())} times in 2 "
        "of 2 runs (counted in totals.csv, not shown one by one)"
    ]


def test_a_random_method_cannot_match_itself():
    # It ended in a KeyError from the runner's count table.
    with pytest.raises(ValueError, match="'nb-random' cannot match its own"):
        Method("nb-random", GaussianNB, query="random", matched_to="nb-random")


def test_a_random_method_matches_an_evpi_method():
    first = Method("r1", GaussianNB, query="random", matched_to="nb-evpi")
    second = Method("r2", GaussianNB, query="random", matched_to="r1")
    methods = [Method("nb-evpi", GaussianNB), first, second]
    with pytest.raises(ValueError, match=r"'r2' matches .*'r1', a random method"):
        run_study("synthetic", methods, n_repeats=1, progress=False)
    with pytest.raises(ValueError, match=r"'r2' matches .*'r1', a random method"):
        run_repetition("synthetic", methods, 0)
