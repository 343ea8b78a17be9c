"""A user's own campaign: load_campaign, campaign_case and the Z24 protocol."""

import hashlib
import importlib.util
import json

import numpy as np
import pandas as pd
import pytest
import scipy.io
from sklearn.naive_bayes import GaussianNB

from skrbal import synthetic_decision_process
from skrbal.datasets import load_campaign, make_degradation_stream, make_z24_like
from skrbal.experiments import (
    Method,
    campaign_case,
    get_case_study,
    run_study,
    study_report,
)


@pytest.fixture(scope="module")
def rig():
    """A four-state test rig recorded as a campaign: 2 cycles, 600 rows."""
    X, y, actions = make_degradation_stream(2, 300, random_state=3)
    return pd.DataFrame(
        {
            "time": np.arange(len(y)) * 60.0,
            "strain": X[:, 0],
            "frequency": X[:, 1],
            "label": y,
            "action": actions,
        }
    )


@pytest.fixture
def rig_csv(rig, tmp_path):
    path = tmp_path / "rig.csv"
    rig.to_csv(path, index=False)
    return path


@pytest.fixture
def process_json(tmp_path):
    """A user's process file, written as the online agent's JSON format."""
    path = tmp_path / "process.json"
    description = {
        "format_version": 1,
        "transition": synthetic_decision_process().transition,
        "state_utility": [10.0, 10.0, 5.0, -75.0],
        "action_utility": [0.0, -20.0],
        "inspection_cost": 7.0,
        "classes": [1, 2, 3, 4],
        "action_names": ["do nothing", "repair"],
    }
    description["transition"] = np.asarray(description["transition"]).tolist()
    path.write_text(json.dumps(description))
    return path


# ---------------------------------------------------------------------- #
# load_campaign
# ---------------------------------------------------------------------- #
def test_load_campaign_reads_every_column(rig, rig_csv):
    campaign = load_campaign(rig_csv, synthetic_decision_process())
    np.testing.assert_allclose(campaign.X, rig[["strain", "frequency"]].to_numpy())
    np.testing.assert_array_equal(campaign.y, rig["label"])
    np.testing.assert_array_equal(campaign.actions, rig["action"])
    np.testing.assert_array_equal(campaign.time, rig["time"])
    assert campaign.feature_names == ["strain", "frequency"]
    assert campaign.source.startswith(f"{rig_csv}, sha256 ")
    assert "actions from column 'action', time from column 'time'" in (
        campaign.description
    )
    # Chosen columns, no action or time column: every action is 0.
    bare = load_campaign(
        rig.drop(columns=["action", "time"]), feature_columns=["frequency"]
    )
    assert bare.feature_names == ["frequency"] and bare.time is None
    assert not bare.actions.any() and "every action 0" in bare.description


def test_load_campaign_parquet(rig, tmp_path):
    pytest.importorskip("pyarrow")
    path = tmp_path / "rig.parquet"
    rig.to_parquet(path)
    campaign = load_campaign(path, synthetic_decision_process())
    np.testing.assert_allclose(campaign.X, rig[["strain", "frequency"]].to_numpy())
    np.testing.assert_array_equal(campaign.y, rig["label"])


@pytest.mark.parametrize("suffix", [".csv", ".parquet"])
def test_load_campaign_source_hashes_the_file(rig, tmp_path, suffix):
    if suffix == ".parquet":
        pytest.importorskip("pyarrow")
    path = tmp_path / f"rig{suffix}"
    if suffix == ".csv":
        rig.to_csv(path, index=False)
    else:
        rig.to_parquet(path)
    campaign = load_campaign(path, synthetic_decision_process())
    digest = hashlib.sha256(path.read_bytes()).hexdigest()
    assert campaign.source == f"{path}, sha256 {digest}"


def test_load_campaign_column_zero_is_a_name_not_a_default():
    # Columns of a DataFrame built from an array are 0, 1, ...: action_column=0
    # and time_column=0 name column 0, they do not fall back to 'action'/'time'.
    table = pd.DataFrame({0: [0, 0, 1], 1: [1.2, 1.4, 3.1], "label": [1, 1, 3]})
    campaign = load_campaign(table, synthetic_decision_process(), action_column=0)
    assert campaign.actions.tolist() == [0, 0, 1]
    assert campaign.feature_names == ["1"]
    table[0] = [0.0, 1.0, 2.0]
    campaign = load_campaign(table, synthetic_decision_process(), time_column=0)
    assert campaign.time.tolist() == [0.0, 1.0, 2.0]
    assert campaign.feature_names == ["1"]


def test_load_campaign_parquet_without_pyarrow_says_how(tmp_path, monkeypatch):
    import importlib.util

    find_spec = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util,
        "find_spec",
        lambda name, *args: None if name == "pyarrow" else find_spec(name, *args),
    )
    path = tmp_path / "rig.parquet"
    path.write_bytes(b"PAR1")
    with pytest.raises(
        ImportError, match=r"rig\.parquet.*pip install 'skrbal\[parquet\]'"
    ):
        load_campaign(path)


def test_load_campaign_action_names(rig):
    process = synthetic_decision_process().set_params(
        action_names=["do nothing", "repair"]
    )
    named = rig.assign(action=np.where(rig["action"] == 1, "repair", "do nothing"))
    campaign = load_campaign(named, process)
    np.testing.assert_array_equal(campaign.actions, rig["action"])


def _edited(rig, **changes):
    table = rig.copy()
    for column, (row, value) in changes.items():
        table[column] = table[column].astype(object)
        table.loc[row, column] = value
    return table


@pytest.mark.parametrize(
    "edit, match",
    [
        (lambda t: t.drop(columns="label"), r"no label column 'label'; its columns"),
        (
            lambda t: _edited(t, label=(5, 7)),
            r"label column 'label' holds \['7'\], not states of the process "
            r"\(its classes are \[1, 2, 3, 4\]\); the first is at row 5 "
            r"\(counted from 0; line 7 of the file\)",
        ),
        (lambda t: _edited(t, label=(4, None)), "label column 'label' has a missing"),
        (
            lambda t: t.assign(note="ok"),
            r"feature column 'note' is not numeric: row 0 .*holds 'ok'",
        ),
        (
            lambda t: _edited(t, frequency=(3, np.nan)),
            r"feature column 'frequency' has a missing value \(NaN or empty\) at "
            "row 3",
        ),
        (
            lambda t: _edited(t, time=(10, -1.0)),
            r"time column 'time' is not in increasing order: row 10 .*\(-1\.0\)",
        ),
        (
            lambda t: _edited(t, action=(2, 5)),
            r"action column 'action' holds 5 at row 2 .*not an action of the "
            r"process \(allowed: 0 to 1 or the names \['do nothing', 'repair'\]\)",
        ),
        (
            lambda t: _edited(t, action=(2, 0.5)),
            r"action column 'action' holds 0\.5 at row 2",
        ),
    ],
)
def test_load_campaign_errors_name_file_column_and_row(rig, tmp_path, edit, match):
    path = tmp_path / "rig.csv"
    edit(rig).to_csv(path, index=False)
    with pytest.raises(ValueError, match=match) as info:
        load_campaign(path, synthetic_decision_process())
    assert str(info.value).startswith(str(path))


def test_load_campaign_argument_errors(rig, rig_csv, tmp_path):
    process = synthetic_decision_process()
    with pytest.raises(FileNotFoundError, match="campaign file not found"):
        load_campaign(tmp_path / "missing.csv")
    text = tmp_path / "rig.txt"
    text.write_text("strain,label\n1.0,1\n")
    with pytest.raises(ValueError, match=r"expected a \.csv, \.parquet or \.pq"):
        load_campaign(text)
    with pytest.raises(ValueError, match="no action column 'act'"):
        load_campaign(rig_csv, process, action_column="act")
    with pytest.raises(ValueError, match="no feature column 'load'"):
        load_campaign(rig_csv, process, feature_columns=["strain", "load"])
    with pytest.raises(ValueError, match=r"a list of column names.*\['strain'\]"):
        load_campaign(rig_csv, process, feature_columns="strain")
    with pytest.raises(ValueError, match="'label' is the label, action or time"):
        load_campaign(rig_csv, process, feature_columns=["label"])
    with pytest.raises(ValueError, match="process must be a DecisionProcess"):
        load_campaign(rig_csv, 3)
    with pytest.raises(FileNotFoundError, match="process file not found"):
        load_campaign(rig_csv, tmp_path / "missing.json")
    empty = tmp_path / "empty.csv"
    empty.write_text("strain,label\n")
    with pytest.raises(ValueError, match="holds no observations"):
        load_campaign(empty)


# ---------------------------------------------------------------------- #
# campaign_case and get_case_study
# ---------------------------------------------------------------------- #
def test_campaign_case_from_files_runs_a_study(rig_csv, process_json, tmp_path):
    case = campaign_case(rig_csv, process_json, initial_size=3)
    assert case.name == "custom" and case.standardise
    assert case.process().action_names == ("do nothing", "repair")
    assert f"; process {process_json} sha256 " in case.source
    X, _, _ = case.record()
    np.testing.assert_allclose(X.mean(axis=0), 0.0, atol=1e-12)
    study = run_study(case, [Method("nb", GaussianNB)], n_repeats=2, progress=False)
    assert study.config["labelling"] == case.labelling
    assert study.config["data_source"] == case.source
    report = study_report(study)
    assert "Labelling: features ['strain', 'frequency'], labels from column" in report
    assert "Features standardised" in report
    # Another process is another study: its digest is in the source.
    other = json.loads(process_json.read_text()) | {"inspection_cost": 8.0}
    assert campaign_case(rig_csv, other, initial_size=3).source != case.source


def test_get_case_study_custom_and_rig(rig, rig_csv, process_json, tmp_path):
    custom = get_case_study("custom", data=rig_csv, process=process_json)
    assert custom.name == "custom" and custom.initial_size == 0.003
    rig_case = get_case_study("synthetic", data=rig_csv)
    assert rig_case.name == "synthetic" and rig_case.initial_size == 0.002
    assert rig_case.process().inspection_cost == 7.0
    with pytest.raises(ValueError, match=r"needs data= .* and process="):
        get_case_study("custom", data=rig_csv)
    with pytest.raises(ValueError, match="process= is only for the 'custom'"):
        get_case_study("synthetic", data=rig_csv, process=process_json)
    five_states = tmp_path / "five.csv"
    _edited(rig, label=(9, 5)).to_csv(five_states, index=False)
    with pytest.raises(ValueError, match=r"five\.csv: label column 'label' holds"):
        get_case_study("synthetic", data=five_states)


def test_z24_protocol_switches_on_the_generator():
    default = get_case_study("z24")
    y_default = default.record()[1]
    _, y_like, _ = make_z24_like(random_state=0)
    np.testing.assert_array_equal(y_default, y_like)  # the temperature rule
    assert "temperature (the generator's latent deck temperature) below 0" in (
        default.labelling
    )
    onset = get_case_study("z24", damage_onset=3462)
    assert np.flatnonzero(onset.record()[1] >= 3)[0] == 3462
    assert "damage_onset=3462" in onset.source
    frequency = get_case_study("z24", cold_rule="frequency")
    y_frequency = frequency.record()[1]
    assert "first natural frequency above 4.1 Hz" in frequency.labelling
    assert 0 < (y_frequency != y_default).sum() < 0.05 * y_default.size
    with pytest.raises(ValueError, match="labelled already"):
        get_case_study("z24", data=make_z24_like(random_state=0), damage_onset=3462)
    with pytest.raises(ValueError, match="options of the 'z24' case study"):
        get_case_study("synthetic", cold_rule="frequency")


def test_z24_case_from_struct_file_with_temperatures(tmp_path):
    X, y, _, temperature = make_z24_like(random_state=2, return_temperature=True)
    path = tmp_path / "z24.mat"
    scipy.io.savemat(
        path, {"databasez24": {"data": X, "info": "Z24", "temperature": temperature}}
    )
    case = get_case_study("z24", data=path)
    np.testing.assert_array_equal(case.record(0)[1], y)  # same rule as the generator
    assert case.labelling.startswith("frequencies from databasez24.data; damage")
    assert "temperature (databasez24.temperature) below 0 degC" in case.labelling
    by_frequency = get_case_study("z24", data=path, cold_rule="frequency")
    assert by_frequency.labelling != case.labelling


# ---------------------------------------------------------------------- #
# columns that cannot be features
# ---------------------------------------------------------------------- #
def test_a_datetime_column_not_named_time_is_refused(rig, tmp_path):
    # It became a feature in nanoseconds since 1970.
    dated = rig.drop(columns="time").assign(
        when=pd.date_range("2024-01-01", periods=len(rig), freq="min")
    )
    sources = [dated]
    if importlib.util.find_spec("pyarrow") is not None:  # the parquet extra
        dated.to_parquet(tmp_path / "rig.parquet")
        sources.append(tmp_path / "rig.parquet")
    for data in sources:
        with pytest.raises(
            ValueError,
            match=r"feature column 'when' holds dates or times, not numbers: "
            r"pass time_column='when' \(--time-column when\)",
        ):
            load_campaign(data)
    dated.to_csv(tmp_path / "rig.csv", index=False)  # ISO text, not numbers
    with pytest.raises(ValueError, match="feature column 'when' holds dates"):
        load_campaign(tmp_path / "rig.csv")
    campaign = load_campaign(dated, time_column="when")
    assert campaign.feature_names == ["strain", "frequency"]
    assert campaign.time[0] == np.datetime64("2024-01-01T00:00")


@pytest.mark.parametrize("big", [1e308, -1e308])
def test_a_column_too_large_to_standardise_is_named(rig, tmp_path, big):
    # [1e308, -1e308, ...] was standardised to all -0.0 (its spread overflows).
    path = tmp_path / "rig.csv"
    rig.assign(load=np.where(np.arange(len(rig)) % 2, big, -big)).to_csv(
        path, index=False
    )
    with pytest.raises(
        ValueError, match=rf"^{path}: feature column 'load' .* too large to"
    ):
        load_campaign(path)
    same_sign = rig.assign(load=np.where(np.arange(len(rig)) % 2, big, big / 2))
    with pytest.raises(ValueError, match="feature column 'load'"):
        load_campaign(same_sign)


def test_a_constant_column_is_left_to_its_user(rig):
    # Not a scaling overflow: the agent may take it, a study names it constant.
    campaign = load_campaign(rig.assign(load=1e308))
    assert np.all(campaign.X[:, -1] == 1e308)


def test_a_one_row_campaign_needs_two_rows(rig, tmp_path):
    # It said feature 0 is "constant".
    path = tmp_path / "one.csv"
    rig.iloc[:1].to_csv(path, index=False)
    with pytest.raises(ValueError, match=rf"^{path} holds 1 observation \(row\)"):
        load_campaign(path)
    with pytest.raises(ValueError, match="at least 2"):
        campaign_case(path, synthetic_decision_process(), initial_size=1)


def test_numbers_as_text_stay_numbers(rig):
    # "1.5" also reads as a date: only a column that is not numbers is tried.
    table = rig.assign(strain=rig["strain"].astype(str).astype(object))
    np.testing.assert_array_equal(load_campaign(table).X[:, 0], rig["strain"])


def test_campaign_times_in_mixed_iso_spellings_read_as_the_agent_reads_them(
    tmp_path,
):
    # A logger's file may spell ISO 8601 differently from row to row ('Z' or
    # '+02:00', fractions on some rows only, a space for the T): the file is
    # read as the live agent reads timestamps, not refused by the format
    # pandas guesses from the first row.
    spelt = [
        "2025-01-01T00:00:00Z",
        "2025-01-01T03:00:00+02:00",
        "2025-01-01 02:00:00.5Z",
        "2025-01-01T03:00Z",
    ]
    table = pd.DataFrame(
        {"time": spelt, "x": [0.1, 0.2, 0.3, 0.4], "label": [1, 1, 2, 2]}
    )
    path = tmp_path / "mixed.csv"
    table.to_csv(path, index=False)
    campaign = load_campaign(path, synthetic_decision_process())
    expected = pd.to_datetime(
        ["2025-01-01T00:00:00", "2025-01-01T01:00:00", "2025-01-01T02:00:00.5",
         "2025-01-01T03:00:00"], format="ISO8601"
    ).to_numpy()  # fmt: skip
    np.testing.assert_array_equal(campaign.time, expected)
    # A naive time next to aware ones is refused, naming the file and column.
    table.loc[3, "time"] = "2025-01-01T03:00:00"
    table.to_csv(path, index=False)
    with pytest.raises(ValueError, match=r"mixed.csv: time column 'time' mixes"):
        load_campaign(path, synthetic_decision_process())
