"""Observation times: numbers are seconds whatever holds them; a bool is no time."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from sklearn.naive_bayes import GaussianNB

from skrbal import synthetic_decision_process
from skrbal.budget import CostThreshold, MinimumGap
from skrbal.online import RiskBasedAgent
from skrbal.online._timestamps import as_seconds


@pytest.mark.parametrize(
    "container",
    [
        lambda v: np.array(v, dtype=object),
        lambda v: pd.Series(v, dtype=object),
        lambda v: pd.Series(v, dtype=object).to_numpy(),
        list,
    ],
    ids=["numpy-object", "pandas-object", "pandas-object-numpy", "list"],
)
def test_numbers_in_an_object_array_are_seconds(container):
    values = [3600.0, 7200, np.float32(10800.0), np.int64(14400)]
    seconds = as_seconds(container(values), "timestamps", 4)
    assert seconds.tolist() == [3600.0, 7200.0, 10800.0, 14400.0]


def test_datetimes_in_an_object_array_are_still_datetimes():
    values = np.array([pd.Timestamp("2024-01-01"), "2024-01-02"], dtype=object)
    assert as_seconds(values, "t", 2).tolist() == [1704067200.0, 1704153600.0]


def test_numbers_mixed_with_datetimes_are_refused():
    values = np.array([3600.0, pd.Timestamp("2024-01-01")], dtype=object)
    with pytest.raises(ValueError, match="timestamps mixes numbers"):
        as_seconds(values, "timestamps", 2)


@pytest.mark.parametrize(
    "value",
    [
        True,
        np.True_,
        [False, True],
        np.array([True, False]),
        np.array([1.0, True], dtype=object),
        pd.Series([True, False]),
    ],
)
def test_a_bool_is_not_a_timestamp(value):
    n = np.asarray(value).size
    with pytest.raises(ValueError, match=r"timestamp must be numbers .* not bool"):
        as_seconds(value, "timestamp", n)


def test_minimum_gap_reads_an_object_column_in_seconds():
    # An hour between every fit sample; then an ambiguous observation two hours
    # after the last one: MinimumGap(3600) must allow inspecting it.
    rng = np.random.default_rng(0)
    labels = np.array([1, 2, 3, 4, 1, 2, 3, 4])
    means = np.array([0.0, 5.0, 10.0, 15.0])
    X0 = rng.normal(means[labels - 1], 1.0)[:, None]
    stamps = pd.Series(3600.0 * np.arange(8), dtype=object)
    process = synthetic_decision_process().set_params(inspection_cost=1.0)
    budget = CostThreshold() & MinimumGap(gap=3600.0)
    agent = RiskBasedAgent(
        estimator=GaussianNB(var_smoothing=0.05), process=process, budget=budget
    ).fit(X0, labels, timestamps=stamps)
    with agent:
        later = pd.Series([3600.0 * 9], dtype=object)
        decisions = agent.observe([[12.5]], timestamps=later)
        assert decisions["timestamp"].tolist() == [32400.0]
        assert decisions["inspect"].tolist() == [True]
