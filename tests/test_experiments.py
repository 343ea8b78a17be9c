import json

import numpy as np
import pandas as pd
import pytest
from sklearn.naive_bayes import GaussianNB

from skrbal.experiments import (
    Method,
    available_methods,
    get_case_study,
    get_method,
    load_study,
    run_repetition,
    run_study,
)

NB = Method("nb-evpi", GaussianNB)
NB_RANDOM = Method("nb-random", GaussianNB, query="random", matched_to="nb-evpi")


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
    pd.testing.assert_frame_equal(a.totals, b.totals)
    assert a.totals["method"].tolist() == ["nb-evpi", "nb-random"]
    counts = a.totals.set_index("method")["n_inspections"]
    assert counts["nb-evpi"] == counts["nb-random"]


def test_same_results_whatever_n_jobs():
    serial = run_study("synthetic", [NB], n_repeats=3, n_jobs=1, progress=False)
    parallel = run_study("synthetic", [NB], n_repeats=3, n_jobs=2, progress=False)
    pd.testing.assert_frame_equal(serial.totals, parallel.totals)
    pd.testing.assert_frame_equal(serial.queries, parallel.queries)


def test_results_are_saved_and_resumed(tmp_path):
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
    pd.testing.assert_frame_equal(more.totals, fresh.totals, check_dtype=False)
    pd.testing.assert_frame_equal(
        load_study(tmp_path).totals, fresh.totals, check_dtype=False
    )
    pd.testing.assert_frame_equal(
        first.totals, fresh.totals.iloc[:2], check_dtype=False
    )
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
