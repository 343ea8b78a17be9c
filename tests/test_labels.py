"""Label lookups: numbers never equal strings, on numpy 1 as on numpy 2."""

import warnings

import numpy as np
import pytest

from skrbal import BayesianGMMClassifier
from skrbal._labels import label_positions, labels_differ


def test_numbers_and_strings_differ_elementwise():
    assert labels_differ(np.array([1, 2, 3]), np.array(["1", "2", "3"])).tolist() == [
        True,
        True,
        True,
    ]
    assert labels_differ(np.array(["a", "b"]), np.array(["a", "c"])).tolist() == [
        False,
        True,
    ]
    # Object arrays compare elementwise as they are.
    assert labels_differ(
        np.array([1, "b"], dtype=object), np.array([1, "c"], dtype=object)
    ).tolist() == [
        False,
        True,
    ]


@pytest.mark.parametrize(
    ("y", "classes"),
    [
        (np.array(["a", "b"]), np.array([1, 2])),
        (np.array([1, 2]), np.array(["a", "b"])),
    ],
)
def test_lookups_of_the_wrong_kind_raise_without_a_future_warning(y, classes):
    # numpy 1 answered `!=` between numbers and strings with one scalar and a
    # FutureWarning; the lookup must give the named error on every numpy.
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(ValueError, match="unknown label"):
            label_positions(y, classes)
        model = BayesianGMMClassifier(classes=classes)
        with pytest.raises(ValueError, match=r"not in classes|cannot be compared"):
            model.fit(np.array([[0.0], [1.0]]), y)


@pytest.mark.parametrize(
    "y",
    [
        np.array([1, "a"], dtype=object),
        np.array(["a", 1], dtype=object),
        np.array([2, None], dtype=object),
    ],
)
def test_labels_of_mixed_kinds_are_a_value_error_naming_them(y):
    # Sorting them raised a raw TypeError ('<' not supported between ...).
    from skrbal import synthetic_decision_process

    with pytest.raises(ValueError, match="y mixes label types") as caught:
        label_positions(y, np.array([1, 2, 3, 4]))
    for label in y.tolist():
        assert repr(label) in str(caught.value)
    with pytest.raises(ValueError, match="mixes label types"):
        synthetic_decision_process().perfect_information_action(y)


def test_check_labels_keeps_labels_of_one_kind():
    from skrbal._labels import check_labels

    assert check_labels([1, 2]).tolist() == [1, 2]
    assert check_labels(np.array(["a", "b"], dtype=object)).tolist() == ["a", "b"]
    with pytest.raises(
        ValueError, match=r"y_test mixes label types: 1 \(number\) and '2' \(string\)"
    ):
        check_labels([1, "2"], "y_test")
