"""A result given by the state's name, as ``status`` and the report print it.

Found driving ``skrbal fleet`` from a fresh shell: ``status`` names the Z24
process's states (``normal``, ``cold``, ...), but ``inspect`` took only the
class values (1, 2, ...) and refused ``normal`` as "not a state of the
process". The same held for ``skrbal agent inspect`` and ``record-label``.
"""

import pandas as pd
import pytest

from skrbal.cli import main


@pytest.fixture(scope="module")
def agent_store(tmp_path_factory):
    folder = tmp_path_factory.mktemp("names")
    store = folder / "a.db"
    stream = folder / "z24.csv"
    assert (
        main(
            ["agent", "init", "--store", store, "--case", "z24", "--stream-out", stream]
        )
        == 0
    )
    feed = pd.read_csv(stream).iloc[1700:1800].drop(columns="label")
    feed.to_csv(folder / "feed.csv", index=False)
    assert (
        main(
            [
                "agent",
                "observe",
                folder / "feed.csv",
                "--store",
                store,
                "--out",
                folder / "d.csv",
            ]
        )
        == 0
    )
    decisions = pd.read_csv(folder / "d.csv")
    return store, decisions


def test_agent_inspect_and_record_label_take_a_state_name(agent_store, capsys):
    store, decisions = agent_store
    asked = decisions[decisions["inspect"]]
    first = int(asked["request_id"].iloc[0])
    assert (
        main(["agent", "inspect", str(first), "incipient damage", "--store", store])
        == 0
    )
    assert "state 3 (incipient damage) recorded" in capsys.readouterr().out
    quiet = int(decisions.loc[~decisions["inspect"], "step"].iloc[0])
    assert main(["agent", "record-label", str(quiet), "cold", "--store", store]) == 0
    assert "state 2 (cold) recorded" in capsys.readouterr().out
    # A class value still works, and an unknown name lists both spellings.
    second = int(asked["request_id"].iloc[1])
    assert main(["agent", "inspect", str(second), "4", "--store", store]) == 0
    assert "state 4 (advanced damage) recorded" in capsys.readouterr().out
    third = int(asked["request_id"].iloc[2])
    assert main(["agent", "inspect", str(third), "cracked", "--store", store]) == 2
    err = capsys.readouterr().err
    assert "'cracked' is not a state of the process" in err
    assert "1 (normal)" in err and "4 (advanced damage)" in err


def test_a_fleet_command_on_no_store_says_how_to_make_a_fleet(tmp_path, capsys):
    # It said "create an agent with 'skrbal agent init'", which makes no fleet.
    assert main(["fleet", "status", "--store", tmp_path / "nope.db"]) == 2
    err = capsys.readouterr().err
    assert "no such store; create a fleet with 'skrbal fleet init'" in err
    assert main(["agent", "status", "--store", tmp_path / "nope.db"]) == 2
    assert "create an agent with 'skrbal agent init'" in capsys.readouterr().err
