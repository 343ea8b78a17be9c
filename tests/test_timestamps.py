"""Observation times: numbers are seconds whatever holds them; a bool is no time."""

from __future__ import annotations

import datetime
import warnings

import numpy as np
import pandas as pd
import pytest
from _examples import examples  # tests/ is on sys.path
from hypothesis import given, settings
from hypothesis import strategies as st
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


# ---------------------------------------------------------------------- #
# ISO 8601 strings that spell their times differently
# ---------------------------------------------------------------------- #
JAN1 = 1704067200.0  # 2024-01-01T00:00:00Z


@pytest.mark.parametrize(
    "values, seconds",
    [
        # 'Z' then a numeric offset: the second is 2024-01-01T01:00:00Z
        (["2024-01-01T00:00:00Z", "2024-01-01T03:00:00+02:00"], [0, 3600]),
        (["2024-01-01T00:00:00Z", "2024-01-01T03:00:00.5+02:00"], [0, 3600.5]),
        (["2024-01-01T00:00Z", "2024-01-01T03:00:00+02:00"], [0, 3600]),
        (["20240101T000000Z", "2024-01-01T03:00:00+0200"], [0, 3600]),
        (["2024-01-01T00:00:00+00:00", "2024-01-01 03:00:00-01"], [0, 4 * 3600]),
        # naive ones (read as UTC) in several spellings
        (
            ["2024-01-01", "2024-01-01T03:00", "2024-01-01 04:00:00.5"],
            [0, 3 * 3600, 4 * 3600 + 0.5],
        ),
    ],
)
def test_iso_strings_may_spell_their_times_differently(values, seconds):
    expected = [JAN1 + s for s in seconds]
    for container in (np.array(values, dtype=object), np.array(values), list(values)):
        got = as_seconds(container, "timestamps", len(values))
        assert got.tolist() == expected


@pytest.mark.parametrize(
    "values",
    [
        ["2024-01-01T00:00:00", "2024-01-01T03:00:00Z"],
        ["2024-01-01T00:00:00+01:00", "2024-01-01T03:00:00"],
        ["2024-01-01T00:00:00Z", "2024-01-01T03:00:00.5"],
        ["2024-01-01", "2024-01-01T03:00:00+02:00"],
        # a first value whose format pandas cannot infer (it used dateutil)
        ["20240101T000000.25", "2024-01-01T03:00Z"],
        ["20240101T000000.25Z", "2024-01-01T03:00"],
    ],
)
def test_iso_strings_with_and_without_an_offset_are_refused(values):
    """A naive time next to an aware one: is it UTC or the sensor's local time?"""
    with pytest.raises(ValueError, match=r"^timestamps .*UTC offset"):
        as_seconds(np.array(values, dtype=object), "timestamps", len(values))


@pytest.mark.parametrize(
    "values, message",
    [
        (["2024-01-01T03:00:00+02:00", "2024-01-01T00:00:00Z"], "must be non-decr"),
        (["2024-01-01T00:00:00Z", None], "must be finite"),
        (["2024-01-01T00:00:00Z", ""], "must be finite"),
        (["2024-01-01T00:00:00Z", np.nan], "mixes numbers"),
        (["2024-01-01T00:00:00Z", "the day after"], "must be numbers .* datetimes"),
        (["2024-01-01T00:00:00Z", "2024-01-01T03:00+25:00"], "must be numbers"),
    ],
)
def test_mixed_iso_spellings_keep_every_other_refusal(values, message):
    with pytest.raises(ValueError, match=f"^timestamps {message}"):
        as_seconds(np.array(values, dtype=object), "timestamps", len(values))


_SPELLINGS = {
    "basic": "%Y%m%dT%H%M%S.%f%z",  # +0200
    "extended": "%Y-%m-%dT%H:%M:%S.%f%z",
    "space": "%Y-%m-%d %H:%M:%S.%f%z",
}


def _spelt(instant: float, minutes: int, spelling: str) -> str:
    """``instant`` at UTC offset ``minutes``, as ISO 8601 in ``spelling``."""
    zone = datetime.timezone(datetime.timedelta(minutes=minutes))
    when = datetime.datetime.fromtimestamp(instant, tz=zone)
    if spelling == "Z":
        return when.astimezone(datetime.UTC).isoformat().replace("+00:00", "Z")
    if spelling == "isoformat":  # +02:00
        return when.isoformat()
    return when.strftime(_SPELLINGS[spelling])


@given(
    data=st.lists(
        st.tuples(
            st.integers(0, 4 * 10**6).map(lambda q: q / 4),  # exact in binary
            st.integers(-48, 56).map(lambda q: 15 * q),  # UTC-12:00 to UTC+14:00
            st.sampled_from(["Z", "isoformat", *_SPELLINGS]),
        ),
        min_size=2,
        max_size=8,
    )
)
@settings(max_examples=examples(60), deadline=None)
def test_any_iso_spelling_of_any_offset_gives_the_instant(data):
    steps, offsets, spellings = zip(*data)
    instants = JAN1 + np.cumsum(steps)
    texts = [_spelt(*args) for args in zip(instants, offsets, spellings)]
    got = as_seconds(np.array(texts, dtype=object), "timestamps", len(texts))
    assert got.tolist() == instants.tolist()


@pytest.mark.parametrize(
    "values",
    [
        ["2024-01-01T00:00:00.25Z", "2024-01-01T00:00:00.75+00:00"],
        np.array(["2024-01-01T00:00:00.25", "2024-01-01T00:00:00.75"], "M8[ns]"),
        np.array(["2024-01-01T00:00:00.25", "2024-01-01T00:00:00.75"], "M8[ms]"),
        [
            pd.Timestamp("2024-01-01T00:00:00.25"),
            pd.Timestamp("2024-01-01T00:00:00.75"),
        ],
    ],
)
def test_fractions_of_a_second_are_exact(values):
    """0.25 s is a binary fraction: the seconds must not be off in the last bit."""
    assert as_seconds(values, "t", 2).tolist() == [JAN1 + 0.25, JAN1 + 0.75]


def test_datetimes_beyond_nanoseconds_range_are_seconds():
    values = np.array(["2500-01-01", "2500-01-02"], dtype="M8[s]")
    expected = values.astype(np.int64).astype(float).tolist()
    assert as_seconds(values, "t", 2).tolist() == expected


def test_iso_strings_are_read_without_a_pandas_warning():
    """pandas warned that it fell back to dateutil, a message users cannot act on."""
    values = ["20240101T000000.25Z", "2024-01-01T03:00:00+02:00"]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert as_seconds(values, "t", 2).tolist() == [JAN1 + 0.25, JAN1 + 3600]
