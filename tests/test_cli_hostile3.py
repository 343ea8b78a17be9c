"""``skrbal fleet`` and ``skrbal agent`` against a careless user: bad files and
arguments end in one line naming the problem, the argument or file and row,
and a refused call commits nothing."""

import numpy as np
import pandas as pd
import pytest

from skrbal import synthetic_decision_process
from skrbal.cli import main
from skrbal.online import AgentStore

MEANS = np.array([-5.0, -0.7, 5.8, 9.0])


def _rows(asset, n, start, labelled, seed):
    rng = np.random.default_rng(seed)
    y = np.tile([1, 2, 3, 4], n // 4 + 1)[:n]
    frame = pd.DataFrame(
        {
            "asset": asset,
            "time": pd.date_range(start, periods=n, freq="h", tz="UTC").strftime(
                "%Y-%m-%dT%H:%M:%SZ"
            ),
            "f1": rng.normal(MEANS[y - 1], 1.0),
        }
    )
    if labelled:
        frame["label"] = y
    return frame


@pytest.fixture
def fleet(tmp_path, capsys):
    """A timed fleet of two assets in a store, and a feed for both."""
    synthetic_decision_process().set_params(inspection_cost=1.0).to_json(
        tmp_path / "process.json"
    )
    commission = pd.concat(
        [_rows(a, 12, "2026-01-01", True, i) for i, a in enumerate(["A", "B"])]
    )
    commission.to_csv(tmp_path / "commission.csv", index=False)
    feed = pd.concat(
        [_rows(a, 6, "2026-01-02", False, 9 + i) for i, a in enumerate(["A", "B"])]
    )
    feed.to_csv(tmp_path / "feed.csv", index=False)
    store = str(tmp_path / "fleet.db")
    argv = [
        "fleet",
        "init",
        "--store",
        store,
        "--process",
        str(tmp_path / "process.json"),
        "--data",
        str(tmp_path / "commission.csv"),
        "--limit",
        "3",
        "--period",
        "1d",
    ]
    assert main(argv) == 0, capsys.readouterr().err
    capsys.readouterr()
    return tmp_path, store, feed


def _one_line_error(capsys, *words):
    _, err = capsys.readouterr()
    assert err.startswith("skrbal: ") and err.count("\n") == 1, err
    assert "Traceback" not in err
    for word in words:
        assert word in err, err
    return err


def _n_observations(store):
    with AgentStore(store) as opened:
        return {a: opened.status(a)["n_observations"] for a in ("A", "B")}


def _observe(store, path, *more):
    return main(["fleet", "observe", "--store", store, "--data", str(path), *more])


# ---------------------------------------------------------------------- #
# fleet observe: a bad row of any asset refuses the whole file
# ---------------------------------------------------------------------- #
BAD_FEEDS = {
    # case: (edit of the feed, words of the error)
    "a feature not a number": (
        lambda f: f.assign(
            f1=f["f1"]
            .astype(object)
            .where(~((f["asset"] == "B") & (f.index == 9)), "n/a")
        ),
        ["line 11", "feature"],
    ),
    "a time zone mixed in": (
        lambda f: f.assign(
            time=f["time"].where(
                ~((f["asset"] == "B") & (f.index == 10)), "2026-01-02T04:00:00+02:00"
            )
        ),
        ["line 12", "line 11"],
    ),
    "a time missing": (
        lambda f: f.assign(
            time=f["time"].where(~((f["asset"] == "B") & (f.index == 11)), "")
        ),
        ["line 13", "time"],
    ),
}


@pytest.mark.parametrize("case", sorted(BAD_FEEDS))
def test_a_bad_row_of_the_second_asset_commits_nothing(fleet, capsys, case):
    """The first asset's rows were decided and committed, then the second's
    bad row failed the command: the decisions were never written out, and a
    second run of the fixed file observed the first asset's rows twice."""
    folder, store, feed = fleet
    edit, words = BAD_FEEDS[case]
    edit(feed.reset_index(drop=True)).to_csv(folder / "bad.csv", index=False)
    assert _observe(store, folder / "bad.csv", "--out", str(folder / "d.csv")) == 2
    err = _one_line_error(capsys, "bad.csv", *words)
    # what the command checks itself, it checks for every asset before the
    # first draw; what only the agent sees (times out of order) stops the
    # command after the assets before it, whose decisions are written out
    written = {"A": 0, "B": 0}
    if (folder / "d.csv").exists():
        written.update(pd.read_csv(folder / "d.csv")["asset"].value_counts())
    assert _n_observations(store) == written
    if written["A"]:
        assert "'A' (6 rows) were decided, recorded and written" in err


def test_a_feature_not_a_number_names_its_line_of_the_file(fleet, capsys):
    """The error named 'row 0' for the file's line 2 (the pandas index)."""
    folder, store, feed = fleet
    feed = feed.reset_index(drop=True)
    feed.loc[0, "f1"] = np.nan
    feed.to_csv(folder / "bad.csv", index=False)
    assert _observe(store, folder / "bad.csv") == 2
    _one_line_error(capsys, "bad.csv, line 2")


def test_an_empty_feed_is_one_line(fleet, capsys):
    folder, store, feed = fleet
    feed.iloc[:0].to_csv(folder / "empty.csv", index=False)
    assert _observe(store, folder / "empty.csv") == 2
    _one_line_error(capsys, "empty.csv", "no rows")


def test_an_inspection_of_another_assets_request_is_refused(fleet, capsys):
    folder, store, _ = fleet
    assert _observe(store, folder / "feed.csv", "--out", str(folder / "d.csv")) == 0
    decisions = pd.read_csv(folder / "d.csv")
    asked = decisions[decisions["inspect"]]
    assert len(asked), "the feed must ask for an inspection"
    row = asked.iloc[0]
    other, request = "B" if row["asset"] == "A" else "A", int(row["request_id"])
    with AgentStore(store) as opened:
        assert request not in set(opened.requests(other)["request_id"])
    argv = ["fleet", "inspect", "--store", store, other, str(request), "1"]
    assert main(argv) == 2
    _one_line_error(capsys, str(request))
    with AgentStore(store) as opened:
        assert opened.status(other)["n_results"] == 0


# ---------------------------------------------------------------------- #
# fleet init
# ---------------------------------------------------------------------- #
def test_init_errors_are_one_line(fleet, capsys):
    folder, _, _ = fleet
    commission = pd.read_csv(folder / "commission.csv")
    commission.drop(columns=["asset"]).to_csv(folder / "no_asset.csv", index=False)
    commission.assign(f1=np.where(commission.index == 5, np.nan, commission["f1"]))
    bad = commission.copy()
    bad.loc[5, "f1"] = np.nan
    bad.to_csv(folder / "nan.csv", index=False)
    base = ["fleet", "init", "--process", str(folder / "process.json")]
    base += ["--limit", "3", "--period", "1d"]
    for data, words in (("no_asset.csv", ["asset"]), ("nan.csv", ["f1"])):
        store = str(folder / f"{data}.db")
        assert main([*base, "--store", store, "--data", str(folder / data)]) == 2
        _one_line_error(capsys, data, *words)


# ---------------------------------------------------------------------- #
# agent init --class-priors
# ---------------------------------------------------------------------- #
@pytest.mark.parametrize(
    "value",
    [
        '{"3": {"shift": NaN, "units": "relative"}}',
        '{"3": {"shift": "left", "units": "relative"}}',
        '{"3": {"shift": -0.02, "units": "furlongs"}}',
        '{"3": {"shift": [1, 2, 3], "units": "relative"}}',
        '{"3": {"shift": -0.02, "units": "relative", "bogus": 1}}',
        '{"3": {"shift": 1e400, "units": "relative"}}',
        '{"3": {}}',
        "[1, 2]",
        '{"3": 5}',
    ],
)
def test_a_bad_class_prior_is_one_line(fleet, capsys, value):
    folder, _, _ = fleet
    commission = pd.read_csv(folder / "commission.csv")
    commission[commission["asset"] == "A"].drop(columns=["asset"]).to_csv(
        folder / "one.csv", index=False
    )
    argv = ["agent", "init", "--store", str(folder / "one.db")]
    argv += ["--process", str(folder / "process.json")]
    argv += ["--data", str(folder / "one.csv"), "--class-priors", value]
    assert main(argv) == 2
    _one_line_error(capsys, "--class-priors")


def test_naive_times_for_agents_with_zoned_times_are_refused(fleet, capsys):
    """'skrbal agent observe' refuses a time without a UTC offset for an agent
    commissioned with offsets (it would be read as UTC, a local clock is not);
    'skrbal fleet observe' read it as UTC without a word."""
    folder, store, feed = fleet
    feed.assign(time=feed["time"].str.replace("Z", "")).to_csv(
        folder / "naive.csv", index=False
    )
    assert _observe(store, folder / "naive.csv") == 2
    _one_line_error(capsys, "naive.csv, line 2", "UTC offset")
    assert _n_observations(store) == {"A": 0, "B": 0}


def test_a_file_that_is_not_text_is_named(fleet, capsys):
    folder, store, _ = fleet
    (folder / "binary.csv").write_bytes(b"asset,f1\n\x00\xff\xfe" * 10)
    assert _observe(store, folder / "binary.csv") == 2
    _one_line_error(capsys, "binary.csv", "UTF-8")


@pytest.mark.parametrize("limit", ["nan", "inf"])
def test_a_limit_that_is_no_amount_is_named(fleet, capsys, limit):
    folder, _, _ = fleet
    argv = ["fleet", "init", "--store", str(folder / "x.db")]
    argv += ["--process", str(folder / "process.json")]
    argv += ["--data", str(folder / "commission.csv"), "--period", "1d"]
    assert main([*argv, "--limit", limit]) == 2
    err = _one_line_error(capsys, f"--limit {limit}")
    assert "below the cost" not in err


def test_every_fleet_command_builds_its_parser(capsys):
    """Two '--window' options of 'skrbal fleet init' (the budget's and the
    shared prior's, from two branches) made every 'skrbal fleet' command end
    in argparse's raw ArgumentError."""
    for verb in ("init", "observe", "inspect", "status", "report", "add"):
        with pytest.raises(SystemExit) as exit_:
            main(["fleet", verb, "--help"])
        assert exit_.value.code == 0
        assert "usage:" in capsys.readouterr().out
