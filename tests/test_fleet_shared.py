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
from tests.test_cli_first_week import one_line

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
        # Both kinds of label after commissioning are read.
        assert set(store.requests("S0")["origin"]) == {"agent", "routine"}
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
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        RiskBasedAgent(
            estimator=GaussianNB(),
            process=synthetic_decision_process(),
            store=path,
            name="c",
        ).fit([[0.0], [1.0], [2.0], [3.0]], [1, 2, 3, 4]).close()
    with FleetKnowledge(path) as knowledge:
        # One healthy label cannot normalise a structure: the agent is named.
        with pytest.raises(ValueError, match="agent 'a' has 1 label"):
            knowledge.prior(exclude="b")
        with pytest.raises(ValueError, match="share one process"):
            knowledge.records()
        with pytest.raises(ValueError, match="no agent 'd'"):
            knowledge.prior(exclude="d")
    with pytest.raises(ValueError, match="window"):
        FleetKnowledge(path, window=1)


# ---------------------------------------------------------------------- #
# the command line
# ---------------------------------------------------------------------- #
SECTION = "From a store and from the shell"


def _session():
    """The section's Python block and the commands of its shell block."""
    import re
    from pathlib import Path

    page = (Path(__file__).parents[1] / "docs/user_guide/fleets.rst").read_text()
    text = page[page.index(SECTION) :]
    code = re.search(r"\.\. code-block:: python\n\n((?:   .*\n|\n)+)", text)[1]
    shell = re.search(r"\.\. code-block:: bash\n\n((?:   .*\n|\n)+)", text)[1]
    commands = [line.strip()[2:] for line in shell.splitlines() if line.strip()]
    return page, "\n".join(line[3:] for line in code.splitlines()), commands


def test_the_documented_session_runs_as_written(tmp_path, capsys, monkeypatch):
    """29.4: the docs' session (`init --shared`, `observe`, `status`, `add`)
    runs as written: its first command through the real `skrbal` command in
    a subprocess, the others through the same parser in this process (to
    spare the start-up CPU). S04 is commissioned on S01-S03, S05 on all four,
    each prior the store's leave-one-out one."""
    import os
    import re
    import shlex
    import subprocess
    import sys

    from skrbal.cli import main

    page, code, commands = _session()
    monkeypatch.chdir(tmp_path)
    made = {}
    exec(compile(code, "fleets.rst", "exec"), made)
    shim = tmp_path / "bin" / "skrbal"
    shim.parent.mkdir()
    shim.write_text(f'#!/bin/sh\nexec "{sys.executable}" -m skrbal "$@"\n')
    shim.chmod(0o755)
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    env = {
        **os.environ,
        "PATH": f"{shim.parent}{os.pathsep}{os.environ['PATH']}",
        "PYTHONPATH": root,
        "OPENBLAS_NUM_THREADS": "1",
    }
    for i, command in enumerate(commands):
        if i == 0:
            done = subprocess.run(
                ["bash", "-e", "-o", "pipefail", "-c", command],
                cwd=tmp_path,
                env=env,
                capture_output=True,
                text=True,
                timeout=300,
            )
            status, err = done.returncode, done.stderr
        else:
            words = shlex.split(command)
            assert words[0] == "skrbal", command
            status, err = main(words[1:]), capsys.readouterr().err
        assert status == 0, f"$ {command}\n{err}"
        for line in err.splitlines():
            warning = re.match(r"skrbal: warning: (\w+Warning): ", line)
            assert warning and warning[1] in page, f"$ {command}\n{err}"
    assert commands[0].startswith("skrbal fleet init --shared")
    store = str(tmp_path / "fleet.db")
    with FleetKnowledge(store) as knowledge:
        assert knowledge.names() == ["S01", "S02", "S03", "S04", "S05"]
        for name, others in (("S04", ["S05"]), ("S05", [])):
            want = knowledge.prior(exclude=[name, *others])
            with Fleet(store) as fleet:
                agent = fleet.agent(name)
                got = agent.estimator.fleet
                # The judged configuration: the stream reaches the model.
                assert agent.semi_supervised == "em"
            assert_allclose(got.mean, want.mean, rtol=1e-12)
            assert_allclose(got.scale, want.scale, rtol=1e-12)
        assert max(got.n_structures) == 4
    decisions = pd.read_csv(tmp_path / "decisions.csv")
    assert len(decisions) == 250 and set(decisions["asset"]) == {"S04"}
    # What the page says S04 did: maintenance on about a third of its damaged
    # hours, which no label of its own showed, and on few healthy ones.
    frame, hour = made["frame"], made["hour"]
    truth = frame.loc[(frame["asset"] == "S04") & (hour >= 50), "label"].to_numpy()
    repair = decisions["action"].to_numpy() == 1
    assert repair[truth > 2].sum() >= 40 and repair[truth <= 2].sum() <= 8
    assert int(decisions["inspect"].sum()) == 9
    # Paced over the weeks, the first in damage an hour after the onset.
    inspected = decisions.index[decisions["inspect"]].to_numpy()
    assert inspected[truth[inspected] > 2][0] == np.argmax(truth > 2) + 1
    # Errors: an asset commissioned twice, and --shared with a --method.
    from skrbal.cli import main

    assert (
        main(["fleet", "add", "--store", store, "--data", str(tmp_path / "new.csv")])
        == 2
    )
    err = capsys.readouterr().err
    assert "asset 'S05' has an agent in the store already" in one_line(err)
    renamed = pd.read_csv(tmp_path / "new.csv").assign(asset="S06")
    renamed.to_csv(tmp_path / "S06.csv", index=False)
    argv = ["fleet", "add", "--store", store, "--data", str(tmp_path / "S06.csv")]
    assert main([*argv, "--json"]) == 0
    added = json.loads(capsys.readouterr().out)["agents"]
    assert added == [{"asset": "S06", "n_commissioning": 50, "fleet_structures": 5}]
    argv = ["fleet", "init", "--shared", "--method", "gmm-evpi"]
    argv += [
        "--store",
        str(tmp_path / "other.db"),
        "--process",
        str(tmp_path / "process.json"),
    ]
    argv += ["--data", str(tmp_path / "fleet.csv"), "--limit", "90", "--period", "1w"]
    assert main(argv) == 2
    assert "--method" in one_line(capsys.readouterr().err)
