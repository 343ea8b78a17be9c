"""The hard generated cases of issue 26: what makes them hard, and their seeds."""

import numpy as np
import pytest

from skrbal.datasets import make_degradation_stream, make_z24_like
from skrbal.experiments import CaseStudy, get_case_study


def _runs(mask):
    """(start, length) of each run of True in a boolean sequence."""
    edges = np.diff(np.r_[0, mask.astype(int), 0])
    starts, stops = np.flatnonzero(edges == 1), np.flatnonzero(edges == -1)
    return starts, stops - starts


@pytest.fixture(scope="module")
def z24_hard():
    return get_case_study("z24-hard").record(0)


@pytest.fixture(scope="module")
def z24_hard_raw():
    case = get_case_study("z24-hard")
    return case.make_data(0)


# ------------------------------------------------------------------ #
# defaults unchanged
# ------------------------------------------------------------------ #
def test_z24_like_defaults_given_explicitly_give_the_same_record():
    X, y, _ = make_z24_like(random_state=3)
    X_given, y_given, _ = make_z24_like(
        random_state=3,
        damage_scale=1.0,
        damage_profile=[0.12, 0.3, 0.5, 0.62, 0.72, 0.8, 0.87, 0.94, 1.0],
        n_cold_spells=3,
        cold_spell_length=(15, 45),
    )
    np.testing.assert_array_equal(X, X_given)
    np.testing.assert_array_equal(y, y_given)


def test_degradation_stream_without_spells_is_the_papers():
    X, y, actions = make_degradation_stream(random_state=3)
    X_none, y_none, actions_none = make_degradation_stream(random_state=3, n_spells=0)
    np.testing.assert_array_equal(X, X_none)
    np.testing.assert_array_equal(y, y_none)
    np.testing.assert_array_equal(actions, actions_none)


def test_paper_cases_unchanged():
    assert get_case_study("z24").standardise_window is None
    assert not get_case_study("synthetic").standardise


# ------------------------------------------------------------------ #
# reproducible from a seed
# ------------------------------------------------------------------ #
@pytest.mark.parametrize("name", ["z24-hard", "synthetic-hard"])
def test_hard_case_record_is_reproducible_from_its_seed(name):
    case = get_case_study(name)
    X, y, actions = case.record(0)
    X_again, y_again, actions_again = case.record(0)
    np.testing.assert_array_equal(X, X_again)
    np.testing.assert_array_equal(y, y_again)
    np.testing.assert_array_equal(actions, actions_again)
    X_other, _, _ = case.record(1)
    assert not np.array_equal(X, X_other)
    split = case.split(random_state=5)
    np.testing.assert_array_equal(
        split.initial_indices, case.split(random_state=5).initial_indices
    )


@pytest.mark.parametrize("name", ["z24-hard", "synthetic-hard"])
def test_hard_case_takes_no_data(name):
    with pytest.raises(ValueError, match="generated record"):
        get_case_study(name, data=(np.zeros((4, 2)), np.ones(4), np.zeros(4)))
    with pytest.raises(ValueError, match="options of the 'z24'"):
        get_case_study(name, damage_onset=100)


# ------------------------------------------------------------------ #
# what makes the Z24-like case hard
# ------------------------------------------------------------------ #
def test_z24_hard_is_standardised_on_its_commissioning_window_only(z24_hard):
    X, y, _ = z24_hard
    window = get_case_study("z24-hard").standardise_window
    np.testing.assert_allclose(X[:window].mean(axis=0), 0.0, atol=1e-12)
    np.testing.assert_allclose(X[:window].std(axis=0), 1.0)
    # The window is healthy and before the winter (a cold night or two at
    # most): what an operator has at commissioning.
    assert np.mean(y[:window] == 1) > 0.95
    # The rest of the record spreads far wider than the window it was
    # scaled by: frost and damage lie many window deviations away.
    assert X[y == 2, 0].mean() > 5
    assert X[y == 4, 0].mean() < -5


def test_z24_hard_has_more_cold_spells_and_longer_frost_runs(z24_hard_raw):
    case = get_case_study("z24")
    _, y_easy, _ = case.make_data(0)
    _, y, _ = z24_hard_raw
    _, lengths = _runs(y == 2)
    _, lengths_easy = _runs(y_easy == 2)
    # Frost for more than a day and a half at a time (12 observations a day).
    long_runs = np.count_nonzero(lengths >= 20)
    assert long_runs >= 4
    assert long_runs >= 2 * np.count_nonzero(lengths_easy >= 20)
    assert (y == 2).sum() > 1.2 * (y_easy == 2).sum()


def test_z24_hard_damage_comes_at_once_late_in_the_record(z24_hard_raw):
    X, y, _ = z24_hard_raw
    onset = int(np.flatnonzero(y >= 3)[0])
    assert onset / y.size > 0.85
    # The last healthy weeks (late summer) against the first and the last
    # damaged ones: most of the loss arrives with the first test.
    before = X[onset - 200 : onset, 0].mean()
    first = X[onset : onset + 40, 0].mean()
    last = X[-40:, 0].mean()
    assert (before - first) > 0.6 * (before - last)
    # Large against the observation noise of the commissioning window.
    spread = X[:300, 0].std()
    assert (before - first) > 5 * spread


# ------------------------------------------------------------------ #
# what makes the synthetic case hard
# ------------------------------------------------------------------ #
def test_synthetic_hard_damage_late_and_spells_before_it():
    X, y, _ = get_case_study("synthetic-hard").record(0)
    onset = int(np.flatnonzero(y >= 3)[0])
    assert onset >= 8000
    assert y[:8000].max() == 2
    # Environmental spells: the same stream without them differs only by a
    # rise of the second feature, in long runs before the damage, many
    # undamaged standard deviations deep.
    X_calm, y_calm, _ = make_degradation_stream(random_state=0, damage_onset=8000)
    np.testing.assert_array_equal(y, y_calm)
    shift = (X - X_calm)[:, 1] / np.sqrt(0.70)
    starts, lengths = _runs(shift > 1.0)
    assert starts.size >= 10
    assert np.all(lengths >= 50)
    assert np.all(starts + lengths <= onset)
    assert shift.max() > 6.0
    assert 0.25 < np.mean(shift[:onset] > 1.0) < 0.6


def test_spells_shift_only_the_second_feature_and_keep_the_states():
    kwargs = dict(n_cycles=2, n_per_cycle=500, damage_onset=800, random_state=4)
    X, y, actions = make_degradation_stream(**kwargs)
    X_spells, y_spells, actions_spells = make_degradation_stream(
        n_spells=3, spell_length=(50, 100), spell_depth=(5.0, 5.0), **kwargs
    )
    np.testing.assert_array_equal(X[:, 0], X_spells[:, 0])
    np.testing.assert_array_equal(y, y_spells)
    np.testing.assert_array_equal(actions, actions_spells)
    shift = X_spells[:, 1] - X[:, 1]
    assert np.all(shift >= 0)
    assert np.all(shift[800:] == 0)  # before the damage onset only
    assert shift.max() == pytest.approx(5.0 * np.sqrt(0.70), rel=0.05)


# ------------------------------------------------------------------ #
# validation
# ------------------------------------------------------------------ #
@pytest.mark.parametrize(
    "profile", [[], [0.5, 0.4, 1.0], [0.0, 1.0], [0.5, 0.9], [[0.5, 1.0]]]
)
def test_z24_like_rejects_a_bad_damage_profile(profile):
    with pytest.raises(ValueError, match="damage_profile"):
        make_z24_like(damage_profile=profile, random_state=0)


@pytest.mark.parametrize("length", [(10,), (20, 20), (1, 5), "ab"])
def test_z24_like_rejects_a_bad_cold_spell_length(length):
    with pytest.raises(ValueError, match="cold_spell_length"):
        make_z24_like(cold_spell_length=length, random_state=0)


@pytest.mark.parametrize(
    ("params", "match"),
    [
        ({"damage_scale": 0.0}, "damage_scale"),
        ({"n_cold_spells": -1}, "n_cold_spells"),
    ],
)
def test_z24_like_rejects_bad_numbers(params, match):
    with pytest.raises(ValueError, match=match):
        make_z24_like(random_state=0, **params)


@pytest.mark.parametrize(
    ("params", "match"),
    [
        ({"n_spells": -1}, "n_spells"),
        ({"spell_length": (5, 5)}, "spell_length"),
        ({"spell_depth": (3.0, 1.0)}, "spell_depth"),
        ({"spell_depth": (0.0, 1.0)}, "spell_depth"),
        ({"spell_depth": "deep"}, "spell_depth"),
    ],
)
def test_degradation_stream_rejects_bad_spells(params, match):
    with pytest.raises(ValueError, match=match):
        make_degradation_stream(random_state=0, **params)


def _case(**params):
    X = np.arange(20.0).reshape(10, 2) ** 1.5
    return CaseStudy(
        name="tiny",
        make_process=None,
        make_data=lambda seed: (X, np.ones(10, dtype=int), np.zeros(10, dtype=int)),
        initial_size=0.2,
        **params,
    )


def test_standardise_window_uses_only_the_first_observations():
    X, _, _ = _case(standardise=True, standardise_window=4).record()
    np.testing.assert_allclose(X[:4].mean(axis=0), 0.0, atol=1e-12)
    np.testing.assert_allclose(X[:4].std(axis=0), 1.0)
    assert X[4:].std(axis=0).min() > 1.0


@pytest.mark.parametrize(
    ("params", "match"),
    [
        ({"standardise": True, "standardise_window": 1}, "at least 2"),
        ({"standardise": False, "standardise_window": 4}, "standardise=True"),
        ({"standardise": True, "standardise_window": 4.0}, "must be an int"),
    ],
)
def test_standardise_window_is_checked(params, match):
    with pytest.raises(ValueError, match=match):
        _case(**params)


def test_standardise_window_longer_than_the_record_is_an_error():
    with pytest.raises(ValueError, match="longer than the record"):
        _case(standardise=True, standardise_window=11).record()


def test_a_study_records_and_reports_the_commissioning_window(tmp_path):
    from skrbal.experiments import run_study, study_report

    case = get_case_study("z24-hard")
    study = run_study(case, ["gmm-evpi"], 1, out=tmp_path / "s", progress=False)
    assert study.config["standardise_window"] == case.standardise_window
    assert "first 300 observations" in study_report(study)
