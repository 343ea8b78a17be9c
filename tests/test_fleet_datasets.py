"""The fleet generator and the fleet campaign loader."""

import numpy as np
import pandas as pd
import pytest

from skrbal import z24_decision_process
from skrbal.datasets import load_fleet_campaign, make_fleet, make_z24_like


@pytest.fixture(scope="module")
def fleet():
    return make_fleet(10, n_samples=800, random_state=3)


def test_make_z24_like_defaults_unchanged_by_the_new_scales():
    """Scales of 1 and Z24's loss give the record bit for bit."""
    X, y, _ = make_z24_like(600, damage_onset=500, random_state=1)
    X1, y1, _ = make_z24_like(
        600,
        damage_onset=500,
        frequency_scale=1.0,
        environment_scale=1.0,
        noise_scale=1.0,
        damage_loss=[0.075, 0.03, 0.055, 0.04],
        random_state=1,
    )
    np.testing.assert_array_equal(X, X1)
    np.testing.assert_array_equal(y, y1)


def test_make_z24_like_scales_act_on_their_part():
    base, _, _, temperature = make_z24_like(
        600, damage_onset=None, random_state=2, return_temperature=True
    )
    scaled, _, _ = make_z24_like(
        600, damage_onset=None, frequency_scale=[2.0, 1.0, 1.0, 0.5], random_state=2
    )
    np.testing.assert_allclose(scaled, base * [2.0, 1.0, 1.0, 0.5])
    quiet, _, _ = make_z24_like(
        600, damage_onset=None, noise_scale=0.01, random_state=2
    )
    assert np.std(np.diff(quiet[:, 0])) < np.std(np.diff(base[:, 0]))
    # Frost stiffens a more sensitive structure more.
    cold = temperature < -3
    sensitive, _, _ = make_z24_like(
        600, damage_onset=None, environment_scale=2.0, random_state=2
    )
    assert sensitive[cold, 0].mean() > base[cold, 0].mean()


@pytest.mark.parametrize(
    "param, value",
    [
        ("frequency_scale", [1.0, 1.0]),
        ("frequency_scale", -1.0),
        ("damage_loss", [0.1, -0.1, 0.0, 0.0]),
        ("environment_scale", 0.0),
        ("noise_scale", float("nan")),
    ],
)
def test_make_z24_like_refuses_bad_scales(param, value):
    with pytest.raises(ValueError, match=param):
        make_z24_like(100, damage_onset=None, **{param: value})


def test_fleet_structures_differ_and_are_reproducible(fleet):
    again = make_fleet(10, n_samples=800, random_state=3)
    for a, b in zip(fleet.structures, again.structures):
        np.testing.assert_array_equal(a.X, b.X)
    levels = [s.X[:50, 0].mean() for s in fleet.structures]
    assert np.ptp(levels) > 0.2  # Hz: different natural frequencies
    assert len({round(s.noise_scale, 6) for s in fleet.structures}) == 10
    assert len({round(s.environment_scale, 6) for s in fleet.structures}) == 10


def test_fleet_damage_onsets_repairs_and_labels(fleet):
    props = fleet.properties
    assert props["damaged"].sum() == 7 and props["unlike"].sum() == 1
    assert props.loc[props["unlike"], "damaged"].all()
    for s in fleet.structures:
        if s.onset is None:
            assert set(np.unique(s.y)) <= {1, 2} and not s.actions.any()
            continue
        stop = s.X.shape[0] if s.repair is None else s.repair + 1
        assert np.isin(s.y[s.onset : stop], [3, 4]).all()
        assert not np.isin(s.y[: s.onset], [3, 4]).any()
        assert (s.y == 3).sum() >= (s.y == 4).sum() >= 1
        if s.repair is not None:
            assert s.actions[s.repair] == 1 and s.actions.sum() == 1
            assert not np.isin(s.y[s.repair + 1 :], [3, 4]).any()


def test_fleet_repair_returns_the_undamaged_record():
    fleet = make_fleet(
        8, n_samples=600, damaged_share=1.0, repair_share=1.0, random_state=0
    )
    s = fleet.structures[0]
    healthy, _, _ = make_z24_like(
        600,
        damage_onset=None,
        frequency_scale=s.frequency_scale,
        environment_scale=s.environment_scale,
        noise_scale=s.noise_scale,
        random_state=s.seed,
        damage_scale=1.25,
        damage_profile=(0.8, 0.82, 0.85, 0.87, 0.9, 0.92, 0.95, 0.97, 1.0),
        n_cold_spells=12,
        cold_spell_length=(24, 96),
    )
    np.testing.assert_array_equal(s.X[: s.onset], healthy[: s.onset])
    np.testing.assert_array_equal(s.X[s.repair + 1 :], healthy[s.repair + 1 :])
    assert (s.X[s.onset : s.repair + 1, 0] < healthy[s.onset : s.repair + 1, 0]).all()


def test_unlike_damage_lowers_other_modes():
    fleet = make_fleet(
        10,
        n_samples=600,
        damaged_share=1.0,
        unlike_share=0.5,
        noise_spread=0.0,
        random_state=1,
    )
    drops = {True: [], False: []}
    for s in fleet.structures:
        before = s.X[s.onset - 60 : s.onset].mean(axis=0)
        after = s.X[s.onset : s.onset + 60].mean(axis=0)
        drops[s.unlike].append((before - after) / before)
    like, unlike = np.mean(drops[False], axis=0), np.mean(drops[True], axis=0)
    assert like[0] > like[1] and unlike[1] > unlike[0]


@pytest.mark.parametrize(
    "param, value",
    [("damaged_share", 1.5), ("unlike_share", -0.1), ("noise_spread", -1.0)],
)
def test_make_fleet_refuses_bad_parameters(param, value):
    with pytest.raises(ValueError, match=param):
        make_fleet(3, n_samples=100, **{param: value})


def test_fleet_campaign_round_trip(fleet, tmp_path):
    path = tmp_path / "fleet.csv"
    fleet.frame.to_csv(path, index=False)
    loaded = load_fleet_campaign(path, z24_decision_process())
    assert loaded.assets == fleet.assets
    for asset, structure in zip(fleet.assets, fleet.structures):
        campaign = loaded.campaigns[asset]
        np.testing.assert_array_equal(campaign.X, structure.X)
        np.testing.assert_array_equal(campaign.y, structure.y)
        np.testing.assert_array_equal(campaign.actions, structure.actions)
        assert campaign.feature_names == ["f1", "f2", "f3", "f4"]
        assert asset in campaign.source


def test_fleet_campaign_interleaved_rows_keep_each_assets_order():
    table = pd.DataFrame(
        {
            "asset": ["A", "B", "A", "B", "A"],
            "time": [0.0, 0.0, 1.0, 1.0, 2.0],
            "f1": [1.0, 10.0, 2.0, 20.0, 3.0],
            "label": [1, 1, 1, 2, 3],
        }
    )
    loaded = load_fleet_campaign(table)
    assert loaded.campaigns["A"].X.ravel().tolist() == [1.0, 2.0, 3.0]
    assert loaded.rows["B"].tolist() == [1, 3]


def test_fleet_campaign_errors_name_the_asset_and_the_column():
    table = pd.DataFrame({"site": ["A", "A"], "f1": [1.0, 2.0], "label": [1, 1]})
    with pytest.raises(ValueError, match="no asset column 'asset'"):
        load_fleet_campaign(table)
    table = pd.DataFrame({"asset": ["A", None], "f1": [1.0, 2.0], "label": [1, 1]})
    with pytest.raises(ValueError, match="row 1: the asset column"):
        load_fleet_campaign(table)
    table = pd.DataFrame(
        {
            "asset": ["A", "A", "B", "B"],
            "f1": [1.0, 2.0, 1.0, 2.0],
            "label": [1, 1, 1, 7],
        }
    )
    with pytest.raises(ValueError, match="asset 'B'"):
        load_fleet_campaign(table, z24_decision_process())
