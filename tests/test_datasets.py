"""Tests for skrbal.datasets: generators, the Z24 loader and the splitter."""

import itertools

import numpy as np
import pandas as pd
import pytest
import scipy.io
from scipy import stats

from skrbal import synthetic_decision_process, z24_decision_process
from skrbal.datasets import (
    load_z24,
    make_degradation_stream,
    make_z24_like,
    stream_test_split,
)
from skrbal.datasets._split import _aggregate_actions

TARGET_MEANS = np.array([[-5.19, -0.01], [-0.66, -0.06], [5.75, -0.11], [19.11, 0.02]])
TARGET_VARIANCES = np.array([[0.68, 0.70], [0.71, 0.91], [0.63, 0.55], [0.71, 0.82]])


def _transition_probabilities(transition, y, actions):
    """P(y[t+1] | y[t], actions[t]) for every step, labels 1..K."""
    return transition[actions[:-1], y[:-1] - 1, y[1:] - 1]


@pytest.fixture(scope="module")
def stream():
    return make_degradation_stream(random_state=0)


@pytest.fixture(scope="module")
def z24_like():
    return make_z24_like(random_state=0)


# ---------------------------------------------------------------------- #
# make_degradation_stream
# ---------------------------------------------------------------------- #
def test_stream_shapes_and_types(stream):
    X, y, actions = stream
    assert X.shape == (12000, 2) and X.dtype == float
    assert y.shape == actions.shape == (12000,)
    assert np.issubdtype(y.dtype, np.integer)
    assert np.issubdtype(actions.dtype, np.integer)
    assert set(np.unique(y)) == {1, 2, 3, 4}
    assert set(np.unique(actions)) == {0, 1}


def test_stream_cycles_visit_classes_in_order(stream):
    _, y, actions = stream
    repairs = np.flatnonzero(actions)
    assert repairs.size == 5
    cycles = np.split(y, repairs + 1)
    assert [len(c) for c in cycles] == [2000] * 6
    for cycle in cycles:
        assert (np.diff(cycle) >= 0).all()
        assert cycle[0] == 1 and cycle[-1] == 4
        counts = np.bincount(cycle, minlength=5)[1:]
        # Roughly balanced segments, but not all identical.
        assert (counts > 300).all() and (counts < 700).all()
    assert len({tuple(np.bincount(c)[1:]) for c in cycles}) > 1


def test_repair_rule_is_exact(stream):
    _, y, actions = stream
    expected = np.zeros_like(actions)
    for t in range(len(y) - 1):
        expected[t] = int(y[t + 1] == 1 and y[t] != 1)
    np.testing.assert_array_equal(actions, expected)
    assert actions[-1] == 0


def test_stream_transitions_possible_under_synthetic_process(stream):
    _, y, actions = stream
    transition = synthetic_decision_process().transition
    assert (_transition_probabilities(transition, y, actions) > 0).all()


def test_stream_class_conditional_moments():
    X, y, _ = make_degradation_stream(n_cycles=10, n_per_cycle=4000, random_state=1)
    for k in range(1, 5):
        Xk = X[y == k]
        assert len(Xk) > 8000
        np.testing.assert_allclose(Xk.mean(axis=0), TARGET_MEANS[k - 1], atol=0.05)
        np.testing.assert_allclose(Xk.var(axis=0), TARGET_VARIANCES[k - 1], rtol=0.1)
    residual = X - TARGET_MEANS[y - 1]
    # The second feature is heavy-tailed (Student-t, df=6: excess kurtosis 3),
    # the first is Gaussian.
    assert stats.kurtosis(residual[:, 1] / np.sqrt(TARGET_VARIANCES[y - 1, 1])) > 1
    assert (
        abs(stats.kurtosis(residual[:, 0] / np.sqrt(TARGET_VARIANCES[y - 1, 0]))) < 0.2
    )


def test_stream_gaussian_tails_when_df_infinite():
    X, y, _ = make_degradation_stream(
        n_cycles=5, n_per_cycle=4000, tail_df=np.inf, random_state=2
    )
    residual = (X[:, 1] - TARGET_MEANS[y - 1, 1]) / np.sqrt(TARGET_VARIANCES[y - 1, 1])
    assert abs(stats.kurtosis(residual)) < 0.2


def test_stream_reproducible():
    first = make_degradation_stream(2, 300, random_state=7)
    again = make_degradation_stream(2, 300, random_state=np.random.RandomState(7))
    other = make_degradation_stream(2, 300, random_state=8)
    for a, b in zip(first, again):
        np.testing.assert_array_equal(a, b)
    assert not np.array_equal(first[0], other[0])


def test_stream_small_cycles_still_visit_every_state():
    _, y, actions = make_degradation_stream(n_cycles=50, n_per_cycle=4, random_state=3)
    np.testing.assert_array_equal(y, np.tile([1, 2, 3, 4], 50))
    assert actions.sum() == 49


def test_stream_damage_onset_keeps_damage_after_it_only():
    paper = make_degradation_stream(3, 400, random_state=4)
    late = make_degradation_stream(3, 400, damage_onset=1000, random_state=4)
    y_paper, y_late = paper[1], late[1]
    # Same draws: the onset only turns significant and critical damage before
    # it into minor damage, and every later observation is the paper's.
    np.testing.assert_array_equal(y_late[:1000], np.minimum(y_paper[:1000], 2))
    np.testing.assert_array_equal(y_late[1000:], y_paper[1000:])
    assert set(np.unique(y_paper[:1000])) == {1, 2, 3, 4}
    assert set(np.unique(y_late[1000:])) >= {3, 4}
    same = y_late == y_paper
    np.testing.assert_array_equal(late[0][same], paper[0][same])
    assert not np.array_equal(late[0][~same], paper[0][~same])
    transition = synthetic_decision_process().transition
    assert (_transition_probabilities(transition, y_late, late[2]) > 0).all()
    assert late[2].sum() == paper[2].sum()  # every cycle still ends in a repair


def test_stream_default_onset_is_the_papers_stream():
    for a, b in zip(
        make_degradation_stream(2, 300, random_state=5),
        make_degradation_stream(2, 300, damage_onset=0, random_state=5),
    ):
        np.testing.assert_array_equal(a, b)


def test_stream_without_damage_never_passes_minor_damage():
    X, y, actions = make_degradation_stream(4, 500, damage_onset=None, random_state=6)
    assert set(np.unique(y)) == {1, 2}
    # Minor damage is repaired: the cycles go on, back to class 1.
    assert actions.sum() == 3
    np.testing.assert_array_equal(y[np.flatnonzero(actions) + 1], 1)
    np.testing.assert_allclose(X[y == 2, 0].mean(), TARGET_MEANS[1, 0], atol=0.2)


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"n_cycles": 0}, "n_cycles must be >= 1"),
        ({"damage_onset": -1}, "damage_onset must be >= 0"),
        ({"damage_onset": 10.0}, "damage_onset must be an integer"),
        ({"n_cycles": 1, "damage_onset": 2000}, "damage_onset=2000 is beyond"),
        ({"n_cycles": 1.5}, "n_cycles must be an integer"),
        ({"n_per_cycle": 3}, "n_per_cycle must be >= 4"),
        ({"tail_df": 2.0}, "tail_df must be a number > 2"),
        ({"length_concentration": 0.0}, "length_concentration must be a number > 0"),
    ],
)
def test_stream_errors(kwargs, match):
    with pytest.raises(ValueError, match=match):
        make_degradation_stream(**kwargs)


# ---------------------------------------------------------------------- #
# stream_test_split
# ---------------------------------------------------------------------- #
def test_split_protocol(stream):
    X, y, actions = stream
    split = stream_test_split(X, y, actions, random_state=0)
    stream_idx, test_idx = split.stream_indices, split.test_indices
    assert len(test_idx) == len(stream_idx) == 6000
    assert np.intersect1d(stream_idx, test_idx).size == 0
    np.testing.assert_array_equal(
        np.sort(np.r_[stream_idx, test_idx]), np.arange(12000)
    )
    # Temporal order kept in both parts.
    assert (np.diff(stream_idx) > 0).all() and (np.diff(test_idx) > 0).all()
    np.testing.assert_array_equal(split.X_stream, X[stream_idx])
    np.testing.assert_array_equal(split.y_stream, y[stream_idx])
    np.testing.assert_array_equal(split.X_test, X[test_idx])
    np.testing.assert_array_equal(split.y_test, y[test_idx])
    # 0.2% of 6000 stream observations, indices into the stream.
    initial = split.initial_indices
    assert len(initial) == 12 == len(np.unique(initial))
    assert initial.min() >= 0 and initial.max() < 6000
    # The stream keeps every repair and stays consistent with the process.
    assert split.actions_stream.sum() == 5
    transition = synthetic_decision_process().transition
    probabilities = _transition_probabilities(
        transition, split.y_stream, split.actions_stream
    )
    assert (probabilities > 0).all()


def test_split_reproducible_and_random(stream):
    X, y, actions = stream
    a = stream_test_split(X, y, actions, random_state=3)
    b = stream_test_split(X, y, actions, random_state=3)
    c = stream_test_split(X, y, actions, random_state=4)
    for key in a:
        np.testing.assert_array_equal(a[key], b[key])
    assert not np.array_equal(a.stream_indices, c.stream_indices)
    assert not np.array_equal(a.initial_indices, c.initial_indices)


def test_aggregate_actions_by_hand():
    actions = np.array([0, 0, 1, 0, 0, 2, 1, 0, 0])
    kept = np.array([0, 1, 4, 5, 8])
    # Intervals [0,1) [1,4) [4,5) [5,8) [8,9): the last non-zero action.
    np.testing.assert_array_equal(_aggregate_actions(actions, kept), [0, 1, 0, 1, 0])
    np.testing.assert_array_equal(_aggregate_actions(actions, np.array([2])), [1])


@pytest.mark.parametrize("n_actions", [2, 3])
def test_split_aggregates_actions_like_a_loop(n_actions):
    # Many short cycles, so repairs often fall between kept observations.
    X, y, _ = make_degradation_stream(n_cycles=60, n_per_cycle=6, random_state=5)
    rng = np.random.default_rng(6)
    actions = rng.integers(0, n_actions, size=len(y)) * (rng.random(len(y)) < 0.2)
    split = stream_test_split(X, y, actions, test_size=0.7, random_state=6)
    kept = np.r_[split.stream_indices, len(y)]
    expected = []
    for start, stop in itertools.pairwise(kept):
        taken = actions[start:stop][actions[start:stop] != 0]
        expected.append(taken[-1] if taken.size else 0)
    np.testing.assert_array_equal(split.actions_stream, expected)
    assert 0 < split.actions_stream.sum()


def test_split_sizes_ints_and_dataframes(stream):
    X, y, _ = stream
    frame = pd.DataFrame(X[:101], columns=["a", "b"])
    split = stream_test_split(frame, y[:101], test_size=41, initial_size=5)
    assert isinstance(split.X_stream, pd.DataFrame)
    assert split.X_stream.shape == (60, 2) and split.X_test.shape == (41, 2)
    np.testing.assert_array_equal(split.X_stream.index, split.stream_indices)
    assert len(split.initial_indices) == 5 and split.actions_stream is None
    # A share of a tiny stream still gives one initial sample.
    assert len(stream_test_split(X[:10], y[:10]).initial_indices) == 1


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"test_size": 1.0}, r"test_size as a float must be in \(0, 1\)"),
        ({"test_size": 0.0}, r"test_size as a float must be in \(0, 1\)"),
        ({"test_size": 9}, "gives 9 of 10 samples"),
        ({"test_size": "half"}, "test_size must be a float"),
        ({"initial_size": 5}, "initial_size=5 gives 5 of 5 samples"),
        ({"initial_size": 0}, "between 1 and 4"),
    ],
)
def test_split_size_errors(stream, kwargs, match):
    X, y, _ = stream
    with pytest.raises(ValueError, match=match):
        stream_test_split(X[:10], y[:10], **kwargs)


def test_split_input_errors(stream):
    X, y, actions = stream
    with pytest.raises(ValueError, match="inconsistent numbers of samples"):
        stream_test_split(X[:10], y[:9])
    with pytest.raises(ValueError, match="actions has shape"):
        stream_test_split(X[:10], y[:10], actions[:9])
    with pytest.raises(ValueError, match="non-negative integer"):
        stream_test_split(X[:10], y[:10], np.full(10, 0.5))
    with pytest.raises(ValueError, match="non-negative integer"):
        stream_test_split(X[:10], y[:10], np.full(10, -1))
    with pytest.raises(ValueError, match="y must be 1-d"):
        stream_test_split(X[:10], y[:10, None])
    with pytest.raises(ValueError, match="at least 3 observations"):
        stream_test_split(X[:2], y[:2])


# ---------------------------------------------------------------------- #
# make_z24_like
# ---------------------------------------------------------------------- #
def test_z24_like_shapes_and_classes(z24_like):
    X, y, actions = z24_like
    assert X.shape == (3932, 4) and y.shape == actions.shape == (3932,)
    assert not actions.any()
    # Damage halves: 456 damaged observations from 3476.
    np.testing.assert_array_equal(y[3476:3704], 3)
    np.testing.assert_array_equal(y[3704:], 4)
    assert set(np.unique(y[:3476])) == {1, 2}
    shares = np.bincount(y)[1:] / len(y)
    assert shares[0] > 0.7 and 0.04 < shares[1] < 0.15
    assert shares[0] > 5 * max(shares[1:])
    # The long cold period is mostly cold, the rest of the winter mostly not
    # (a few frosty nights and short spells).
    assert (y[1250:1450] == 2).mean() > 0.8
    assert (y[:1100] == 2).mean() < 0.2


def test_z24_like_frequencies(z24_like):
    X, y, _ = z24_like
    normal, cold, incipient, advanced = (X[y == k].mean(axis=0) for k in (1, 2, 3, 4))
    np.testing.assert_allclose(normal, [4, 5, 10, 11], atol=0.2)
    assert (cold > normal).all()
    assert (incipient < normal).all() and (advanced < incipient).all()
    # All modes move together with temperature.
    correlation = np.corrcoef(X[y != 4].T)
    assert correlation[np.triu_indices(4, 1)].min() > 0.5
    # Non-Gaussian classes (heavy-tailed identification errors, frost).
    assert (stats.normaltest(X[y == 1], axis=0).pvalue < 1e-2).all()
    assert (stats.normaltest(X[y == 2], axis=0).pvalue < 1e-6).all()
    # Overlap: some normal observations are higher than the least cold ones.
    assert X[y == 1, 0].max() > X[y == 2, 0].min()
    assert X[y == 1, 0].min() < X[y == 3, 0].max()


def test_z24_like_winter_jump_and_summer():
    X, y, _, temperature = make_z24_like(random_state=3, return_temperature=True)
    before = np.arange(y.size) < 3476
    frozen = before & (temperature < -3.0)
    mild = before & (temperature > 3.0) & (temperature < 10.0)
    # Below freezing every mode jumps up, the first by several percent...
    jump = np.median(X[frozen], axis=0) / np.median(X[mild], axis=0) - 1.0
    assert (jump > 0.02).all() and jump[0] > 0.04
    # ...while warmth softens the deck gradually, and the summer is hot.
    warm = before & (temperature > 20.0)
    assert warm.sum() > 200
    drift = np.median(X[warm], axis=0) / np.median(X[mild], axis=0) - 1.0
    assert (drift < 0).all() and (drift > -0.05).all()
    assert jump[0] > -2 * drift[0]


def test_z24_like_damage_only_at_the_end_and_progressive():
    X, y, _ = make_z24_like(random_state=4)
    damaged = np.flatnonzero(y >= 3)
    assert damaged[0] == 3476 and damaged.size == 456
    # The first damage tests hide in the normal spread; the last do not.
    first_mode = X[:, 0]
    normal = first_mode[:3476][y[:3476] == 1]
    first, last = first_mode[3476:3526], first_mode[-50:]
    assert np.median(first) > np.percentile(normal, 1)
    assert np.median(last) < np.percentile(normal, 1)
    assert np.median(last) < np.median(first)


def test_z24_like_without_damage_and_with_late_damage():
    X, y, _, temperature = make_z24_like(
        damage_onset=None, random_state=5, return_temperature=True
    )
    assert set(np.unique(y)) == {1, 2}
    assert X.shape == (3932, 4)
    # Post-onset observations of a record without damage can be cold; the
    # seasons are the same as with damage.
    _, _, _, with_damage = make_z24_like(random_state=5, return_temperature=True)
    np.testing.assert_array_equal(temperature, with_damage)
    _, y_late, _ = make_z24_like(damage_onset=3782, random_state=5)
    assert np.flatnonzero(y_late >= 3)[0] == 3782
    assert (y_late == 3).sum() == 75 and (y_late == 4).sum() == 75


def test_z24_like_default_cold_rule_recovers_cold_class(z24_like, tmp_path):
    X, y, _ = z24_like
    path = tmp_path / "z24.csv"
    np.savetxt(path, X, delimiter=",")
    _, y_loaded, _ = load_z24(path)
    agreement = (y_loaded == y).mean()
    assert 0.95 < agreement < 1.0


def test_z24_like_reproducible_and_onset():
    a = make_z24_like(500, damage_onset=401, random_state=1)
    b = make_z24_like(500, damage_onset=401, random_state=1)
    for u, v in zip(a, b):
        np.testing.assert_array_equal(u, v)
    assert not np.array_equal(a[0], make_z24_like(500, damage_onset=401)[0])
    # 99 damaged observations: the incipient half gets the extra one.
    assert (a[1] == 3).sum() == 50 and (a[1] == 4).sum() == 49
    assert (a[1][:401] != 3).all()


def test_z24_like_is_consistent_with_z24_process(z24_like):
    _, y, actions = z24_like
    transition = z24_decision_process().transition
    assert (_transition_probabilities(transition, y, actions) > 0).all()


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"damage_onset": 3931}, "fewer than 2 post-damage"),
        ({"damage_onset": 0}, "damage_onset must be >= 1"),
        ({"n_samples": 2}, "n_samples must be >= 3"),
    ],
)
def test_z24_like_errors(kwargs, match):
    with pytest.raises(ValueError, match=match):
        make_z24_like(**kwargs)


# ---------------------------------------------------------------------- #
# load_z24
# ---------------------------------------------------------------------- #
@pytest.fixture
def small_z24():
    # 60 rows, damage from 40: a cold stretch at rows 10-14 (f1 above 4.1).
    rng = np.random.default_rng(8)
    X = np.array([3.95, 5.05, 9.85, 10.95]) + rng.normal(scale=0.02, size=(60, 4))
    X[10:15] += 0.4
    X[40:] -= 0.2
    X[45] = [4.3, 5.1, 10.0, 11.0]  # post-damage, never cold
    return X


def _expected_small_labels():
    y = np.ones(60, dtype=int)
    y[10:15] = 2
    y[40:50] = 3
    y[50:] = 4
    return y


def test_load_csv_with_and_without_header(small_z24, tmp_path):
    with_header = tmp_path / "with.csv"
    np.savetxt(with_header, small_z24, delimiter=",", header="f1,f2,f3,f4", comments="")
    bare = tmp_path / "bare.CSV"
    np.savetxt(bare, small_z24, delimiter=",")
    for path in (with_header, str(bare)):
        X, y, actions = load_z24(path, damage_onset=40)
        np.testing.assert_allclose(X, small_z24)
        np.testing.assert_array_equal(y, _expected_small_labels())
        assert actions.shape == (60,) and not actions.any()


def test_load_mat_with_key(small_z24, tmp_path):
    path = tmp_path / "z24.mat"
    scipy.io.savemat(path, {"data": small_z24, "freqs": small_z24[:, ::-1]})
    X, y, _ = load_z24(path, damage_onset=40)
    np.testing.assert_allclose(X, small_z24)
    np.testing.assert_array_equal(y, _expected_small_labels())
    X_other, _, _ = load_z24(path, damage_onset=40, key="freqs")
    np.testing.assert_allclose(X_other, small_z24[:, ::-1])


def test_load_cold_rules_and_onset(small_z24, tmp_path):
    path = tmp_path / "z24.csv"
    np.savetxt(path, small_z24, delimiter=",")
    _, y, _ = load_z24(path, damage_onset=40, cold_rule=100.0)
    assert not (y == 2).any()
    mask = np.zeros(60, dtype=bool)
    mask[[3, 55]] = True
    _, y, _ = load_z24(path, damage_onset=40, cold_rule=lambda X: mask)
    assert np.flatnonzero(y == 2).tolist() == [3]  # row 55 is damaged
    _, y, _ = load_z24(path, damage_onset=41)
    assert (y == 3).sum() == 10 and (y == 4).sum() == 9 and y[40] == 1


def test_load_errors(small_z24, tmp_path):
    with pytest.raises(FileNotFoundError, match="not found"):
        load_z24(tmp_path / "missing.mat")
    txt = tmp_path / "z24.txt"
    txt.write_text("1,2,3,4\n")
    with pytest.raises(ValueError, match=r"expected a \.mat or \.csv"):
        load_z24(txt)

    mat = tmp_path / "z24.mat"
    scipy.io.savemat(mat, {"freqs": small_z24})
    with pytest.raises(ValueError, match=r"no variable 'data'.*\['freqs'\]"):
        load_z24(mat, damage_onset=40, key="data")
    scipy.io.savemat(mat, {"data": small_z24.T})
    with pytest.raises(ValueError, match="looks transposed"):
        load_z24(mat, damage_onset=40)
    scipy.io.savemat(mat, {"data": np.array(["a", "b"])})
    with pytest.raises(ValueError, match="are not numeric"):
        load_z24(mat, damage_onset=40)
    bad = small_z24.copy()
    bad[7, 2] = np.nan
    scipy.io.savemat(mat, {"data": bad})
    with pytest.raises(ValueError, match="non-finite value at row 7, column 2"):
        load_z24(mat, damage_onset=40)
    corrupt = tmp_path / "corrupt.mat"
    corrupt.write_bytes(b"not a MATLAB file at all" * 10)
    with pytest.raises(ValueError, match="could not read"):
        load_z24(corrupt)

    csv = tmp_path / "z24.csv"
    np.savetxt(csv, small_z24[:, :3], delimiter=",")
    with pytest.raises(ValueError, match=r"shape \(60, 3\)"):
        load_z24(csv, damage_onset=40)
    csv.write_text("f1,f2,f3,f4\n1,2,3,4\n1,2,x,4\n")
    with pytest.raises(ValueError, match="not a CSV of numbers"):
        load_z24(csv, damage_onset=1)
    np.savetxt(csv, small_z24, delimiter=",")
    with pytest.raises(ValueError, match="fewer than 2 post-damage"):
        load_z24(csv)  # the default onset 3476 is beyond 60 rows
    with pytest.raises(ValueError, match="boolean array of shape"):
        load_z24(csv, damage_onset=40, cold_rule=lambda X: X[:, 0])
    with pytest.raises(ValueError, match="cold_rule must be a threshold"):
        load_z24(csv, damage_onset=40, cold_rule="cold")


@pytest.mark.parametrize(
    "content",
    [b"", b"MATLAB 5.0 MAT-file", b"MATLAB 5.0 MAT-file" + b"\x00" * 200],
    ids=["empty", "header-only", "truncated"],
)
def test_load_unreadable_mat_names_the_file(tmp_path, content):
    path = tmp_path / "broken-z24.mat"
    path.write_bytes(content)
    with pytest.raises(ValueError, match=r"broken-z24\.mat"):
        load_z24(path)


def test_load_truncated_mat_names_the_file(small_z24, tmp_path):
    path = tmp_path / "cut-z24.mat"
    scipy.io.savemat(path, {"data": small_z24})
    path.write_bytes(path.read_bytes()[:300])
    with pytest.raises(ValueError, match=r"cut-z24\.mat"):
        load_z24(path, damage_onset=40)


@pytest.mark.parametrize("encoding", ["utf-16", "utf-32"])
def test_load_csv_in_a_wide_encoding_names_file_and_encoding(
    small_z24, tmp_path, encoding
):
    path = tmp_path / "wide.csv"
    rows = "\n".join(",".join(f"{v:.6f}" for v in row) for row in small_z24)
    path.write_text(f"f1,f2,f3,f4\n{rows}\n", encoding=encoding)
    with pytest.raises(ValueError, match=rf"wide\.csv.*{encoding.upper()}"):
        load_z24(path, damage_onset=40)


def test_load_csv_in_latin1_names_file_line_and_column(small_z24, tmp_path):
    path = tmp_path / "latin.csv"
    rows = "\n".join(",".join(f"{v:.6f}" for v in row) for row in small_z24)
    path.write_text(f"f1,f2,fréquence 3,f4\n{rows}\n", encoding="latin-1")
    with pytest.raises(ValueError, match=r"latin\.csv.*UTF-8.*line 1, column 2"):
        load_z24(path, damage_onset=40)


def test_load_csv_with_utf8_signature(small_z24, tmp_path):
    """A spreadsheet's UTF-8 with a byte-order mark is UTF-8: it reads."""
    path = tmp_path / "excel.csv"
    rows = "\n".join(",".join(repr(float(v)) for v in row) for row in small_z24)
    path.write_text(f"f1,f2,f3,f4\n{rows}\n", encoding="utf-8-sig")
    X, _, _ = load_z24(path, damage_onset=40)
    np.testing.assert_array_equal(X, small_z24)


def test_load_constant_column_names_file_and_column(small_z24, tmp_path):
    path = tmp_path / "stuck.csv"
    X = small_z24.copy()
    X[:, 2] = 9.85  # a sensor channel that never changed
    np.savetxt(path, X, delimiter=",")
    with pytest.raises(ValueError, match=r"stuck\.csv.*column 2.*constant"):
        load_z24(path, damage_onset=40)
    empty = tmp_path / "empty.csv"
    empty.write_text("")
    with pytest.raises(ValueError, match=r"empty\.csv.*empty"):
        load_z24(empty, damage_onset=40)


# ---------------------------------------------------------------------- #
# load_z24: files as they circulate (structs, temperatures)
# ---------------------------------------------------------------------- #
def test_load_mat_struct_found_by_search_and_by_key(small_z24, tmp_path):
    path = tmp_path / "z24.mat"
    # savemat writes a dict as a MATLAB struct, as circulated copies hold it.
    info = "Z24 natural frequencies, modes 1-4"
    scipy.io.savemat(path, {"databasez24": {"data": small_z24, "info": info}})
    for key in (None, "databasez24.data"):
        X, y, _ = load_z24(path, damage_onset=40, key=key)
        np.testing.assert_allclose(X, small_z24)
        np.testing.assert_array_equal(y, _expected_small_labels())
    with pytest.raises(ValueError, match=r"no variable 'databasez24\.freq'") as info:
        load_z24(path, damage_onset=40, key="databasez24.freq")
    message = str(info.value)
    assert "databasez24: struct with fields ['data', 'info']" in message
    assert "databasez24.data: float64 array of shape (60, 4)" in message


def test_load_mat_struct_array_element_by_key(small_z24, tmp_path):
    path = tmp_path / "runs.mat"
    runs = [{"data": small_z24}, {"data": small_z24[:, ::-1]}]
    scipy.io.savemat(path, {"runs": np.array(runs, dtype=object)})
    with pytest.raises(ValueError, match=r"several numeric arrays.*runs\[1\]\.data"):
        load_z24(path, damage_onset=40)
    X, _, _ = load_z24(path, damage_onset=40, key="runs[1].data")
    np.testing.assert_allclose(X, small_z24[:, ::-1])


def test_load_mat_says_what_it_found_when_nothing_fits(small_z24, tmp_path):
    path = tmp_path / "z24.mat"
    scipy.io.savemat(
        path, {"databasez24": {"freq": small_z24[:, :3], "info": "modes 1-3"}}
    )
    with pytest.raises(ValueError, match="no numeric array of shape") as info:
        load_z24(path, damage_onset=40)
    message = str(info.value)
    assert str(path) in message
    assert "databasez24: struct with fields ['freq', 'info']" in message
    assert "databasez24.freq: float64 array of shape (60, 3)" in message
    assert "databasez24.info: text 'modes 1-3'" in message
    scipy.io.savemat(path, {"databasez24": {"data": small_z24.T}})
    with pytest.raises(
        ValueError,
        match=r"databasez24.data has shape \(4, 60\).*"
        "transposed",
    ):
        load_z24(path, damage_onset=40)


def _temperatures():
    temperature = np.full(60, 8.0)
    temperature[20:26] = -3.0  # frost without any frequency rise
    temperature[50:] = -1.0  # damaged: never cold
    return temperature


def test_load_temperature_rule_from_struct_field(small_z24, tmp_path):
    path = tmp_path / "z24.mat"
    temperature = _temperatures()
    scipy.io.savemat(
        path, {"databasez24": {"data": small_z24, "temperature": temperature}}
    )
    _, y, _ = load_z24(path, damage_onset=40)  # 'auto' finds the temperatures
    assert np.flatnonzero(y == 2).tolist() == list(range(20, 26))
    _, y_t, _ = load_z24(path, damage_onset=40, cold_rule="temperature")
    np.testing.assert_array_equal(y_t, y)
    _, y_f, _ = load_z24(path, damage_onset=40, cold_rule="frequency")
    np.testing.assert_array_equal(y_f, _expected_small_labels())

    scipy.io.savemat(path, {"data": small_z24, "tdeck": temperature})
    _, y_k, _ = load_z24(path, damage_onset=40, temperature_key="tdeck")
    np.testing.assert_array_equal(y_k, y)
    with pytest.raises(ValueError, match="needs the temperatures"):
        load_z24(path, damage_onset=40, cold_rule="temperature")
    _, y_auto, _ = load_z24(path, damage_onset=40)  # no named temperatures
    np.testing.assert_array_equal(y_auto, _expected_small_labels())


def test_load_temperature_column_of_a_csv(small_z24, tmp_path):
    path = tmp_path / "z24.csv"
    table = np.column_stack([small_z24[:, :2], _temperatures(), small_z24[:, 2:]])
    np.savetxt(
        path, table, delimiter=",", header="f1,f2,Temperature,f3,f4", comments=""
    )
    X, y, _ = load_z24(path, damage_onset=40)
    np.testing.assert_allclose(X, small_z24)
    assert np.flatnonzero(y == 2).tolist() == list(range(20, 26))
    _, y_f, _ = load_z24(path, damage_onset=40, cold_rule="frequency")
    np.testing.assert_array_equal(y_f, _expected_small_labels())


def test_load_temperature_errors(small_z24, tmp_path):
    path = tmp_path / "z24.mat"
    kelvin = _temperatures() + 273.15
    scipy.io.savemat(path, {"data": small_z24, "temperature": kelvin})
    with pytest.raises(ValueError, match=r"\(temperature\) are all above 150.*kelvin"):
        load_z24(path, damage_onset=40)
    gap = _temperatures()
    gap[33] = np.nan
    scipy.io.savemat(path, {"data": small_z24, "temperature": gap})
    with pytest.raises(ValueError, match="non-finite value at row 33"):
        load_z24(path, damage_onset=40)
    _, y, _ = load_z24(path, damage_onset=40, cold_rule="frequency")  # not used
    np.testing.assert_array_equal(y, _expected_small_labels())
    csv = tmp_path / "z24.csv"
    np.savetxt(csv, small_z24, delimiter=",", header="f1,f2,f3,f4", comments="")
    with pytest.raises(ValueError, match=r"no column 'tdeck'.*\['f1', 'f2'"):
        load_z24(csv, damage_onset=40, temperature_key="tdeck")


def test_circulated_damage_onset_shifts_the_damage_classes(tmp_path):
    from skrbal._z24_labels import Z24_DAMAGE_ONSET, Z24_DAMAGE_ONSET_CIRCULATED

    X, _, _ = make_z24_like(random_state=0)
    path = tmp_path / "z24.mat"
    scipy.io.savemat(path, {"databasez24": {"data": X}})
    _, paper, _ = load_z24(path, cold_rule="frequency")
    _, circulated, _ = load_z24(
        path, damage_onset=Z24_DAMAGE_ONSET_CIRCULATED, cold_rule="frequency"
    )
    assert np.flatnonzero(paper >= 3)[0] == Z24_DAMAGE_ONSET == 3476
    assert np.flatnonzero(circulated >= 3)[0] == 3462
    assert (circulated == 3).sum() == (3932 - 3462) // 2


def test_load_mat_inventory_of_a_crowded_file_is_bounded(tmp_path):
    path = tmp_path / "many.mat"
    fields = {f"channel{i:02d}": np.arange(3.0) + i for i in range(60)}
    scipy.io.savemat(path, {"database": fields})
    with pytest.raises(ValueError, match="no numeric array") as info:
        load_z24(path)
    message = str(info.value)
    assert "database.channel38: float64 array of shape (3,)" in message
    assert "database: struct with 60 fields ['channel00'," in message
    assert "database.channel39:" not in message
    assert "; and 21 more entries." in message
