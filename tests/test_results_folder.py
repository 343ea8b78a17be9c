"""The results folder of a study is a database: checked, locked, exact."""

import json
import os
import shutil
import signal
import stat
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from sklearn.naive_bayes import GaussianNB

import skrbal
from skrbal.experiments import Method, StudyFileWarning, load_study, run_study

# A script run by a subprocess imports the skrbal under test.
ENV = {**os.environ, "PYTHONPATH": str(Path(skrbal.__file__).parents[1])}
NB = Method("nb-evpi", GaussianNB)
NB_RANDOM = Method("nb-random", GaussianNB, query="random", matched_to="nb-evpi")


def assert_identical(a: pd.DataFrame, b: pd.DataFrame, check_dtype=True) -> None:
    """Bit-identical frames, dtypes included, except the wall-clock time."""
    pd.testing.assert_frame_equal(
        a.drop(columns="seconds", errors="ignore").reset_index(drop=True),
        b.drop(columns="seconds", errors="ignore").reset_index(drop=True),
        check_exact=True,
        check_dtype=check_dtype,
    )


def assert_same_study(a, b) -> None:
    assert_identical(a.totals, b.totals)
    assert_identical(a.queries, b.queries)


def rep_file(out, repetition):
    return out / "repetitions" / f"rep-{repetition:05d}.json"


@pytest.fixture(scope="module")
def fresh():
    """The uninterrupted three-repetition study every folder is compared with."""
    return run_study("synthetic", [NB, NB_RANDOM], n_repeats=3, progress=False)


def study(out, n_repeats=3, **kwargs):
    return run_study(
        "synthetic",
        [NB, NB_RANDOM],
        n_repeats=n_repeats,
        out=out,
        progress=False,
        **kwargs,
    )


def test_saved_numbers_are_exact(tmp_path, fresh, read_tidy_csv):
    """Every number read back equals the computed one, bit for bit."""
    study(tmp_path)
    assert_same_study(load_study(tmp_path), fresh)
    assert_identical(read_tidy_csv(tmp_path / "totals.csv"), fresh.totals)
    assert_identical(read_tidy_csv(tmp_path / "queries.csv"), fresh.queries, False)
    # A resumed study mixes loaded and recomputed repetitions: still exact.
    rep_file(tmp_path, 1).unlink()
    resumed = study(tmp_path, resume=True)
    assert_same_study(resumed, fresh)
    # The full-precision float (not a 10-digit rounding) is what the file holds.
    f1 = fresh.queries["f1_macro"].to_numpy()
    assert any(len(repr(float(v))) > 12 for v in f1)


def test_folder_without_config_is_refused(tmp_path):
    """Repetition files that no config.json vouches for are never reused."""
    study(tmp_path)
    (tmp_path / "config.json").unlink()
    stamp = rep_file(tmp_path, 0).stat().st_mtime_ns
    for kwargs in ({}, {"resume": True}, {"resume": True, "seed": 5}):
        with pytest.raises(FileExistsError, match=r"no config\.json"):
            study(tmp_path, **kwargs)
    assert rep_file(tmp_path, 0).stat().st_mtime_ns == stamp
    assert not (tmp_path / "config.json").exists()


def test_overwrite_replaces_a_study(tmp_path, fresh):
    study(tmp_path, n_repeats=4, seed=9)
    (tmp_path / "config.json").unlink()  # even a folder that cannot be checked
    assert_same_study(study(tmp_path, overwrite=True), fresh)
    assert len(list((tmp_path / "repetitions").glob("rep-*.json"))) == 3
    assert json.loads((tmp_path / "config.json").read_text())["seed"] == 0
    assert_same_study(load_study(tmp_path), fresh)
    with pytest.raises(ValueError, match=r"resume.*overwrite"):
        study(tmp_path, resume=True, overwrite=True)


def test_copied_repetition_file_is_detected_and_redone(tmp_path, fresh):
    study(tmp_path)
    shutil.copy(rep_file(tmp_path, 0), rep_file(tmp_path, 1))
    with pytest.raises(ValueError, match=r"rep-00001\.json.*holds repetition 0"):
        load_study(tmp_path)
    with pytest.warns(StudyFileWarning, match=r"rep-00001\.json.*holds repetition 0"):
        resumed = study(tmp_path, resume=True)
    assert_same_study(resumed, fresh)
    assert_same_study(load_study(tmp_path), fresh)


def _empty_frames(path):
    """The file with its two tables emptied, columns kept."""
    payload = json.loads(path.read_text())
    for name in ("queries", "totals"):
        part = payload[name]
        if "data" in part:
            part["data"] = []
        else:
            part["values"] = [[] for _ in part["columns"]]
    path.write_text(json.dumps(payload))


def test_repetition_with_empty_frames_is_redone_not_dropped(tmp_path, fresh):
    study(tmp_path)
    _empty_frames(rep_file(tmp_path, 2))
    with pytest.raises(ValueError, match=r"rep-00002\.json.*0 rows"):
        load_study(tmp_path)
    with pytest.warns(StudyFileWarning, match=r"rep-00002\.json"):
        resumed = study(tmp_path, resume=True)
    assert_same_study(resumed, fresh)
    assert_same_study(load_study(tmp_path), fresh)


def test_incomplete_and_foreign_files_are_named(tmp_path):
    study(tmp_path)
    path = rep_file(tmp_path, 1)
    payload = json.loads(path.read_text())

    # One method's rows lost from the queries table.
    broken = json.loads(json.dumps(payload))
    part = broken["queries"]
    keep = [m == "nb-evpi" for m in part["values"][part["columns"].index("method")]]
    part["values"] = [[v for v, k in zip(col, keep) if k] for col in part["values"]]
    path.write_text(json.dumps(broken))
    with pytest.raises(ValueError, match=r"rep-00001\.json.*nb-random"):
        load_study(tmp_path)

    # A file of another study (another seed) copied in.
    other = tmp_path / "other"
    study(other, seed=4)
    shutil.copy(rep_file(other, 1), path)
    with pytest.raises(ValueError, match=r"rep-00001\.json.*another study"):
        load_study(tmp_path)


@pytest.mark.parametrize(
    "content, problem",
    [
        ('{"queries": {"columns": ["a"', "not valid JSON"),
        ("[" * 100_000 + "]" * 100_000, "nested too deeply"),
        ("[]", "not a repetition file"),
        ('{"format_version": 3}', "not a repetition file"),
        (b"\xff\xfe\x00garbage", "not valid JSON"),
    ],
)
def test_unreadable_repetition_files_are_named(tmp_path, content, problem):
    study(tmp_path, n_repeats=2)
    path = rep_file(tmp_path, 1)
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_text(content)
    with pytest.raises(ValueError, match=rf"rep-00001\.json.*{problem}"):
        load_study(tmp_path)
    with pytest.warns(StudyFileWarning, match=problem):
        study(tmp_path, n_repeats=2, resume=True)
    assert len(load_study(tmp_path).totals) == 4


@pytest.mark.parametrize(
    "content, problem",
    [
        ('{"case": "synth', "not valid JSON"),
        ("[" * 100_000 + "]" * 100_000, "nested too deeply"),
        ('{"case": "synthetic"}', "lacks"),
    ],
)
def test_unreadable_config_is_named(tmp_path, content, problem):
    study(tmp_path, n_repeats=1)
    (tmp_path / "config.json").write_text(content)
    with pytest.raises(ValueError, match=rf"config\.json.*{problem}"):
        load_study(tmp_path)
    with pytest.raises(ValueError, match=rf"config\.json.*{problem}"):
        study(tmp_path, n_repeats=1, resume=True)


def test_smaller_repeats_keep_folder_and_study_consistent(
    tmp_path, fresh, read_tidy_csv
):
    """Resuming with fewer repetitions gives the first ones; the rest stay."""
    study(tmp_path, n_repeats=3)
    stamp = rep_file(tmp_path, 2).stat().st_mtime_ns
    smaller = study(tmp_path, n_repeats=2, resume=True)
    first_two = fresh.totals[fresh.totals["repetition"] < 2]
    assert_identical(smaller.totals, first_two)
    assert_identical(read_tidy_csv(tmp_path / "totals.csv"), first_two)
    assert_identical(load_study(tmp_path).totals, first_two)
    assert json.loads((tmp_path / "config.json").read_text())["n_repeats"] == 2
    assert load_study(tmp_path).config["n_repeats"] == 2
    # The third repetition is kept on disk and reused when asked for again.
    again = study(tmp_path, n_repeats=3, resume=True)
    assert rep_file(tmp_path, 2).stat().st_mtime_ns == stamp
    assert_same_study(again, fresh)


def test_result_files_follow_the_umask(tmp_path):
    previous = os.umask(0o027)
    try:
        study(tmp_path / "study", n_repeats=1)
    finally:
        os.umask(previous)
    out = tmp_path / "study"
    for path in (
        out / "config.json",
        out / "totals.csv",
        out / "queries.csv",
        rep_file(out, 0),
    ):
        assert stat.S_IMODE(path.stat().st_mode) == 0o640, path.name


_SLOW_STUDY = """
import sys
from sklearn.naive_bayes import GaussianNB
from skrbal.experiments import Method, run_study

method = Method("nb-evpi", GaussianNB, learner_params={"block_size": 1})
run_study("synthetic", [method], n_repeats=200, out=sys.argv[1], progress=False)
"""


def test_second_run_into_a_busy_folder_is_refused(tmp_path):
    script = tmp_path / "study.py"
    script.write_text(_SLOW_STUDY)
    out = tmp_path / "study"
    process = subprocess.Popen([sys.executable, str(script), str(out)], env=ENV)
    try:
        deadline = time.monotonic() + 120
        while not (out / "config.json").exists():
            assert process.poll() is None, "the first run ended early"
            assert time.monotonic() < deadline, "the first run never started"
            time.sleep(0.01)
        before = sorted(p.name for p in out.rglob("*"))
        for kwargs in ({"resume": True}, {"overwrite": True}, {}):
            with pytest.raises(BlockingIOError, match=rf"{out.name}.*another run"):
                run_study(
                    "synthetic",
                    [Method("nb-evpi", GaussianNB, learner_params={"block_size": 1})],
                    n_repeats=200,
                    out=out,
                    progress=False,
                    **kwargs,
                )
        assert process.poll() is None
        # Nothing of the first run was touched (its temporary files included).
        after = {p.name for p in out.rglob("*")}
        assert {name for name in before if not name.startswith(".rep-")} <= after
    finally:
        process.send_signal(signal.SIGKILL)
        process.wait(timeout=60)
    # The lock died with its holder: the folder can be resumed at once.
    assert process.returncode == -signal.SIGKILL
    resumed = run_study(
        "synthetic",
        [Method("nb-evpi", GaussianNB, learner_params={"block_size": 1})],
        n_repeats=1,
        out=out,
        resume=True,
        progress=False,
    )
    assert resumed.totals["repetition"].tolist() == [0]


def test_arguments_are_named():
    with pytest.raises(ValueError, match="methods"):
        run_study("synthetic", [], n_repeats=1, progress=False)
    with pytest.raises(ValueError, match="n_repeats must be an integer"):
        run_study("synthetic", [NB], n_repeats=2.5, progress=False)
    with pytest.raises(ValueError, match="n_repeats must be >= 1"):
        run_study("synthetic", [NB], n_repeats=0, progress=False)
    with pytest.raises(ValueError, match="seed must be >= 0"):
        run_study("synthetic", [NB], n_repeats=1, seed=-1, progress=False)
    with pytest.raises(ValueError, match="seed must be an integer"):
        run_study("synthetic", [NB], n_repeats=1, seed=1.5, progress=False)
    assert np.int64(2) == len(
        run_study("synthetic", [NB], n_repeats=np.int64(2), progress=False).totals
    )


def _scaled_by_first(X, weights):
    return X * weights[0]


def _padded_nb(weights):
    """GaussianNB behind a transformer whose long parameter repr() truncates."""
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import FunctionTransformer

    return make_pipeline(
        FunctionTransformer(_scaled_by_first, kw_args={"weights": weights}),
        GaussianNB(),
    )


def test_a_changed_long_parameter_is_not_resumed(tmp_path):
    # scikit-learn's repr summarises an array of more than 1000 numbers
    # ("[1., 1., 1., ..., 1., 1., 1.]"), so a configuration fingerprinted by
    # repr accepted a resumed study whose estimator differs deep inside.
    from functools import partial

    weights = np.ones(2000)
    changed = weights.copy()
    changed[1000] = 2.0
    first = Method("padded", partial(_padded_nb, weights))
    second = Method("padded", partial(_padded_nb, changed))
    assert repr(first.estimator()) == repr(second.estimator())
    run_study("synthetic", [first], n_repeats=1, out=tmp_path, progress=False)
    with pytest.raises(ValueError, match=r"configuration differs in \['methods'\]"):
        run_study(
            "synthetic",
            [second],
            n_repeats=2,
            out=tmp_path,
            resume=True,
            progress=False,
        )
    # The same configuration, built afresh, is still resumed.
    again = Method("padded", partial(_padded_nb, weights.copy()))
    resumed = run_study(
        "synthetic", [again], n_repeats=2, out=tmp_path, resume=True, progress=False
    )
    assert resumed.totals["repetition"].tolist() == [0, 1]
