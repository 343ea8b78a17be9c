"""Stating where damage lies from the command line (``--class-priors``).

The user guide's recommended configuration for a structure commissioned on
healthy data alone states, per unseen state, where its features lie relative
to the healthy ones. From Python that is ``BayesianGMMClassifier(class_priors=
...)``; ``skrbal agent init`` had no way to say it, so a command-line user
could not follow the guide. Each test runs the real ``skrbal`` command.
"""

import json

import pytest
from test_cli_first_week import hand_typed_process, measurements, one_line, skrbal

STATEMENT = {
    "damaged": {"shift": -0.02, "units": "relative"},
    "severe": {"shift": -0.05, "units": "relative"},
}


@pytest.fixture
def campaign(tmp_path):
    process = tmp_path / "process.json"
    process.write_text(json.dumps(hand_typed_process(), indent=2))
    table = measurements(40)
    table["label"] = ["healthy"] * 30 + [""] * 10
    table.to_csv(tmp_path / "c.csv", index=False)
    return ["--process", process, "--data", tmp_path / "c.csv"]


def _init(tmp_path, campaign, *options, store="a.db"):
    return skrbal(
        "agent", "init", "--store", tmp_path / store, *campaign, *options
    )  # fmt: skip


def test_a_statement_inline_or_in_a_file_is_stored_with_the_model(tmp_path, campaign):
    from skrbal.online import RiskBasedAgent

    code, out, err = _init(tmp_path, campaign, "--class-priors", json.dumps(STATEMENT))
    assert code == 0, err
    assert "(damage stated for damaged, severe (--class-priors))" in out
    path = tmp_path / "priors.json"
    path.write_text(json.dumps(STATEMENT))
    code, _, err = _init(tmp_path, campaign, "--class-priors", path, store="b.db")
    assert code == 0, err
    for store in ("a.db", "b.db"):
        agent = RiskBasedAgent.from_store(str(tmp_path / store))
        try:
            assert agent.estimator.get_params()["class_priors"] == STATEMENT
            # The statement moves the unseen states' prior means below the
            # healthy class's, 2 % and 5 % of its level (not a no-op).
            model = agent.estimator_
            index = list(model.classes_).index
            healthy = model.mean_posterior_[index("healthy")]
            for state, level in (("damaged", 0.98), ("severe", 0.95)):
                ratio = model.directed_mean_prior_[index(state)] / healthy
                assert ratio.round(3).tolist() == [level] * 4
        finally:
            agent.close()


@pytest.mark.parametrize(
    "value, expected",
    [
        ('{"cracked": {"shift": -0.02}}', "--class-priors: state 'cracked' is not"),
        ("{damaged: -0.02}", "--class-priors {damaged: -0.02}: not valid JSON"),
        ('["damaged"]', "--class-priors: expected a JSON object"),
        ('{"damaged": -0.02}', "--class-priors: the statement for 'damaged'"),
    ],
)
def test_a_bad_statement_is_refused_naming_the_option(
    tmp_path, campaign, value, expected
):
    code, _, err = _init(tmp_path, campaign, "--class-priors", value)
    assert code == 2 and expected in one_line(err), err
    assert not (tmp_path / "a.db").exists()  # refused before the store opens


def test_a_model_without_a_prior_refuses_a_statement(tmp_path, campaign):
    code, _, err = _init(
        tmp_path, campaign, "--method", "mrvm2-evpi", "--class-priors",
        json.dumps(STATEMENT),
    )  # fmt: skip
    assert code == 2
    assert "--class-priors states a Gaussian mixture's prior" in one_line(err)


def test_history_prior_is_stored_with_the_agent_and_a_bad_share_named(
    tmp_path, campaign
):
    # ``RiskBasedAgent(history_prior=...)`` had no command-line form, so the
    # user guide's option for a structure commissioned on healthy data could
    # not be tried from the command line.
    from skrbal.online import RiskBasedAgent

    code, _, err = _init(tmp_path, campaign, "--history-prior", "0.3")
    assert code == 0, err
    agent = RiskBasedAgent.from_store(str(tmp_path / "a.db"))
    try:
        assert agent.history_prior == 0.3
    finally:
        agent.close()
    code, _, err = _init(tmp_path, campaign, "--history-prior", "1.5", store="b.db")
    assert code == 2
    assert one_line(err) == "skrbal: --history-prior must be in [0, 1], got 1.5"
    assert not (tmp_path / "b.db").exists()
