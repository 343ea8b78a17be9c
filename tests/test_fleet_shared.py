"""Shared strength from a store: FleetKnowledge and ``skrbal fleet --shared/add``."""

import json
import warnings

import numpy as np
import pandas as pd
import pytest
from numpy.testing import assert_allclose, assert_array_equal

from skrbal import synthetic_decision_process
from skrbal.fleet import Fleet, FleetBudget, FleetKnowledge
from skrbal.mixture import FleetPrior, PooledGMMClassifier
from skrbal.online import AgentStore, RiskBasedAgent
from tests.test_cli_first_week import one_line, skrbal

CLASSES = [1, 2, 3, 4]
DAMAGE = 3  # the state the fleet saw and the new structure did not


def _structure(s: int, rng, n_later: int = 30):
    """A structure: 50 healthy rows, then healthy and damaged (state 3) rows.

    In its own units (centre, spread per structure) damage lies four healthy
    deviations below its healthy centre, on every structure alike.
    """
    centre = np.array([10.0 * s, 5.0 * s + 3.0])
    spread = np.array([1.0 + 0.2 * s, 0.5 + 0.1 * s])
    healthy = centre + spread * rng.normal(size=(50 + n_later, 2))
    damaged = centre + spread * (-4.0 + 0.5 * rng.normal(size=(8, 2)))
    X = np.vstack([healthy, damaged])
    truth = np.r_[[1] * (50 + n_later), [DAMAGE] * 8]
    return X, truth, centre, spread


def _store_fleet(store, n: int, rng):
    """``n`` agents: commissioned on 50 healthy labels, then a stream whose
    labels are learned as routine labels or inspection results; returns each
    one's labelled set as the user gave it, in step order."""
    process = synthetic_decision_process()
    expected = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for s in range(n):
            X, truth, _, _ = _structure(s, rng)
            y = np.array(truth, dtype=object)
            later = np.arange(50, len(y))
            # A few healthy labels and every damaged one after the window.
            unknown = later[(later % 10 != 0) & (truth[later] == 1)]
            y[unknown] = None
            agent = RiskBasedAgent(
                estimator=PooledGMMClassifier(classes=CLASSES),
                process=process,
                store=store,
                name=f"S{s}",
            ).fit(X, list(y))
            # Then an inspection result the agent asked for, if any is open.
            requests = agent.store_.requests(agent.name)
            open_ = requests[requests["status"] == "open"]
            known = y != None  # noqa: E711 (an object array of labels)
            for request_id, step in zip(open_["request_id"], open_["step"]):
                agent.record_inspection(int(request_id), int(truth[step]))
                known[step] = True
            agent.close()
            expected.append((X[known], truth[known]))
    return expected


def test_the_prior_read_from_a_store_is_that_of_its_labels(store_url):
    """29.2: the fleet prior from a store equals FleetPrior.from_structures
    on the same labelled sets (commissioning, routine labels, results), and
    leave-one-out leaves the structure out."""
    rng = np.random.RandomState(0)
    store = AgentStore(store_url)
    try:
        expected = _store_fleet(store, 3, rng)
        with FleetKnowledge(store) as knowledge:
            assert knowledge.names() == ["S0", "S1", "S2"]
            for (_, X, y), (X0, y0) in zip(knowledge.records(), expected):
                assert_allclose(X, X0, rtol=0, atol=0)
                assert_array_equal(y, y0)
            got = knowledge.prior(exclude="S2")
        want = FleetPrior.from_structures(expected[:2], classes=CLASSES, window=50)
        for param in ("mean", "mean_precision", "degrees_of_freedom", "scale"):
            assert_allclose(getattr(got, param), getattr(want, param), rtol=1e-12)
        assert got.n_structures.tolist() == [2, 0, 2, 0]
        assert_array_equal(got.classes, want.classes)
    finally:
        store.close()


def test_a_structure_commissioned_on_the_store_knows_unseen_damage(store_url):
    """29.2: a new structure commissioned on healthy labels alone, with the
    classifier FleetKnowledge gives, believes damage where the fleet saw it
    (the broad prior alone does not), resumes with the same prior, and its
    store verifies."""
    rng = np.random.RandomState(1)
    process = synthetic_decision_process()
    X, truth, centre, spread = _structure(3, rng)
    store = AgentStore(store_url)
    try:
        with FleetKnowledge(store) as knowledge:
            lonely = knowledge.classifier(classes=CLASSES)  # an empty fleet
        assert lonely.fleet is None
        _store_fleet(store, 3, rng)
        with FleetKnowledge(store) as knowledge:
            shared = knowledge.classifier()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            alone = PooledGMMClassifier(classes=CLASSES).fit(X[:50], truth[:50])
            fleet = Fleet(store, budget=FleetBudget(limit=10.0, period=24.0))
            agent = fleet.commission(
                "new", X[:50], truth[:50], estimator=shared, process=process
            )
            model = agent.estimator_
            fleet.close()
        where = centre - 4.0 * spread  # where damage lies on the others
        k = CLASSES.index(DAMAGE)
        assert model.predict_proba([where])[0, k] > 0.9
        # Alone, the broad prior cannot tell the states it has no label of.
        assert_allclose(alone.predict_proba([where])[0, 1:], 1 / 3, atol=1e-3)
        # Its damage mean is the fleet's (about 4 deviations down), in its
        # own normalised units, weighted by the transfer strength.
        fleet_mean = shared.fleet.mean[k]
        assert np.all(np.abs(fleet_mean + 4.0) < 0.5)
        own = (model.means_[k] - model.normaliser_mean_) / model.normaliser_scale_
        assert_allclose(own, model.transfer_weight_[k] * fleet_mean, rtol=1e-9)
        assert model.transfer_weight_[k] == pytest.approx(0.9)
        assert lonely.get_params() == PooledGMMClassifier(classes=CLASSES).get_params()
        with Fleet(store) as again:
            resumed = again.agent("new")
            assert_allclose(resumed.estimator_.means_, model.means_, rtol=1e-12)
            assert resumed.estimator.fleet.n_structures.tolist() == [3, 0, 3, 0]
        assert store.verify("new")["seq"] >= 1
    finally:
        store.close()


def test_records_refuse_a_structure_of_other_features(tmp_path):
    from sklearn.naive_bayes import GaussianNB

    path = str(tmp_path / "mixed.db")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        RiskBasedAgent(
            estimator=GaussianNB(),
            process=synthetic_decision_process(),
            store=path,
            name="a",
        ).fit([[0.0], [1.0], [2.0], [3.0]], [1, 2, 3, 4]).close()
        RiskBasedAgent(
            estimator=GaussianNB(),
            process=synthetic_decision_process(),
            store=path,
            name="b",
        ).fit([[0.0, 1.0], [1.0, 2.0], [2.0, 0.0], [3.0, 1.0]], [1, 2, 3, 4]).close()
    with FleetKnowledge(path) as knowledge:
        with pytest.raises(ValueError, match="share one process"):
            knowledge.records()
        with pytest.raises(ValueError, match="no agent 'c'"):
            knowledge.prior(exclude="c")
    with pytest.raises(ValueError, match="window"):
        FleetKnowledge(path, window=1)


# ---------------------------------------------------------------------- #
# the command line
# ---------------------------------------------------------------------- #
@pytest.fixture(scope="module")
def fleet_files(tmp_path_factory):
    """A fleet campaign: three damaged assets with their labelled history up
    to 20 rows past onset, one (S04) with 50 healthy rows; and a fifth (S05)
    with 50 healthy rows, to add."""
    from skrbal import z24_decision_process
    from skrbal.datasets import make_fleet

    folder = tmp_path_factory.mktemp("shared")
    made = make_fleet(
        6,
        n_samples=400,
        damaged_share=1.0,
        unlike_share=0.0,
        repair_share=0.0,
        random_state=3,
    )
    parts = []
    for structure in made.structures[:3]:
        rows = made.frame[made.frame["asset"] == structure.asset]
        parts.append(rows.iloc[: structure.onset + 20])
    for asset in ("S04", "S05"):
        rows = made.frame[made.frame["asset"] == asset]
        parts.append(rows[rows["label"] == 1].iloc[:50])
    frame = pd.concat(parts).drop(columns=["action"])
    frame[frame["asset"] != "S05"].to_csv(folder / "fleet.csv", index=False)
    frame[frame["asset"] == "S05"].to_csv(folder / "new.csv", index=False)
    z24_decision_process().to_json(folder / "process.json")
    return folder


def test_fleet_init_shared_and_add_from_the_shell(fleet_files, tmp_path):
    """29.4: `skrbal fleet init --shared` commissions each asset on the ones
    before it, `skrbal fleet add` a new one on the whole fleet; both through
    the real command."""
    store = tmp_path / "fleet.db"
    status, out, err = skrbal(
        "fleet", "init", "--shared", "--store", store,
        "--process", fleet_files / "process.json",
        "--data", fleet_files / "fleet.csv",
        "--limit", "90", "--period", "168", "--json",
    )  # fmt: skip
    assert status == 0, err
    agents = json.loads(out)["agents"]
    assert [a["fleet_structures"] for a in agents] == [0, 1, 2, 3]
    opened = AgentStore(str(store))
    try:
        config = [opened.configuration(a["asset"])["estimator"] for a in agents]
    finally:
        opened.close()
    text = [json.dumps(c) for c in config]
    assert all("PooledGMMClassifier" in t for t in text)
    assert "FleetPrior" not in text[1] and "FleetPrior" in text[3]
    status, out, err = skrbal(
        "fleet", "add", "--store", store, "--data", fleet_files / "new.csv"
    )
    assert status == 0, err
    assert out.strip() == (
        "S05: commissioned on 50 rows, with what 4 structures of fleet 'fleet' know"
    )
    with FleetKnowledge(str(store)) as knowledge:
        want = knowledge.prior(exclude="S05")
    with Fleet(str(store)) as fleet:
        got = fleet.agent("S05").estimator.fleet
    assert_allclose(got.mean, want.mean, rtol=1e-12)
    status, out, err = skrbal(
        "fleet", "add", "--store", store, "--data", fleet_files / "new.csv"
    )
    assert status == 2
    assert "asset 'S05' has an agent in the store already" in one_line(err)
    status, out, err = skrbal(
        "fleet", "init", "--shared", "--method", "gmm-evpi",
        "--store", tmp_path / "other.db",
        "--process", fleet_files / "process.json",
        "--data", fleet_files / "fleet.csv", "--limit", "90", "--period", "168",
    )  # fmt: skip
    assert status == 2 and "--method" in one_line(err)
