import json

import numpy as np
import pytest
from _examples import examples  # tests/ is on sys.path
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays
from sklearn.base import clone

from skrbal import DecisionProcess, synthetic_decision_process, z24_decision_process
from skrbal._decision._presets import _SYNTHETIC_TRANSITION as _SYNTHETIC
from skrbal._decision._presets import _Z24_TRANSITION_AS_PRINTED


def _random_process(rng, n_actions, n_states, cost=1.0):
    transition = rng.dirichlet(np.ones(n_states), size=(n_actions, n_states))
    return DecisionProcess(
        transition=transition,
        state_utility=rng.normal(scale=10, size=n_states),
        action_utility=rng.normal(scale=10, size=n_actions),
        inspection_cost=cost,
    )


@st.composite
def process_and_beliefs(draw):
    n_actions = draw(st.integers(1, 4))
    n_states = draw(st.integers(1, 5))
    seed = draw(st.integers(0, 2**32 - 1))
    rng = np.random.default_rng(seed)
    process = _random_process(rng, n_actions, n_states)
    raw = draw(
        arrays(
            float,
            (draw(st.integers(1, 6)), n_states),
            elements=st.floats(0, 1, allow_nan=False),
        )
    )
    raw[:, 0] += 1e-3
    return process, raw / raw.sum(axis=1, keepdims=True)


# ---------------------------------------------------------------- values


def test_synthetic_state_action_utility_by_hand():
    process = synthetic_decision_process()
    q = process.state_action_utility
    # d = 0, state 2: 0.8 * 10 + 0.15 * 5 + 0.05 * -75
    assert q[1, 0] == pytest.approx(5.0)
    # d = 1, state 4: 0.99 * 10 + 0.01 * -75 - 30
    assert q[3, 1] == pytest.approx(-20.85)
    assert process.n_states == 4 and process.n_actions == 2


def test_synthetic_evpi_by_hand():
    process = synthetic_decision_process()
    p = np.array([[0.6, 0.2, 0.1, 0.1]])
    q = np.array([[9.5, -20.0], [5.0, -20.0], [-11.0, -20.05], [-75.0, -20.85]])
    eu = p @ q  # [[-2.2, -20.09]] -> do nothing
    with_info = 0.6 * 9.5 + 0.2 * 5.0 + 0.1 * -11.0 + 0.1 * -20.85
    np.testing.assert_allclose(process.expected_utility(p), eu)
    np.testing.assert_allclose(process.evpi(p), with_info - eu.max())
    assert process.optimal_action(p).tolist() == [0]
    assert process.should_inspect(p).tolist() == [with_info - eu.max() > 7]


def test_evpi_peaks_where_actions_tie():
    process = synthetic_decision_process()
    grid = np.linspace(0, 1, 1001)
    p = np.column_stack([1 - grid, np.zeros_like(grid), np.zeros_like(grid), grid])
    evpi = process.evpi(p)
    eu = process.expected_utility(p)
    tie = np.argmin(np.abs(eu[:, 0] - eu[:, 1]))
    assert abs(np.argmax(evpi) - tie) <= 1
    assert evpi[0] == 0 and evpi[-1] == 0


def test_perfect_information_and_realised_utility():
    process = synthetic_decision_process()
    assert process.perfect_information_action([4, 1, 3]).tolist() == [1, 0, 0]
    np.testing.assert_allclose(process.realised_utility([3, 4], [1, 0]), [-20.05, -75])


def test_z24_process():
    process = z24_decision_process()
    np.testing.assert_allclose(process.transition.sum(axis=2), 1.0, atol=1e-12)
    assert process.inspection_cost == 30
    assert process.perfect_information_action([1, 2, 3, 4]).tolist() == [0, 0, 1, 1]


def test_z24_tables_as_printed_are_rejected():
    process = clone(z24_decision_process()).set_params(
        transition=np.array(_Z24_TRANSITION_AS_PRINTED)
    )
    with pytest.raises(ValueError, match=r"row 1 for action 0 sums to"):
        process.evpi([[1, 0, 0, 0]])
    fixed_d0 = np.array(_Z24_TRANSITION_AS_PRINTED)
    fixed_d0[0, 1] = [0.43, 0.55, 0.015, 0.005]
    with pytest.raises(ValueError, match=r"row 0 for action 1 sums to"):
        process.set_params(transition=fixed_d0).evpi([[1, 0, 0, 0]])


# ---------------------------------------------------------------- labels


def test_columns_are_mapped_through_classes():
    process = synthetic_decision_process()
    p = np.array([[0.7, 0.3]])
    aligned = process.align_proba(p, classes=[4, 1])
    np.testing.assert_allclose(aligned, [[0.3, 0, 0, 0.7]])
    np.testing.assert_allclose(process.evpi(p, classes=[4, 1]), process.evpi(aligned))


def test_string_classes():
    process = DecisionProcess(
        transition=np.stack([np.eye(2), [[1, 0], [1, 0]]]),
        state_utility=[1.0, -9.0],
        action_utility=[0.0, -1.0],
        classes=["ok", "broken"],
    )
    assert process.perfect_information_action(["broken", "ok"]).tolist() == [1, 0]
    with pytest.raises(ValueError, match="unknown label 'cracked'"):
        process.perfect_information_action(["cracked"])
    with pytest.raises(ValueError, match="unknown label 'cracked'"):
        process.evpi([[1.0]], classes=["cracked"])


# ---------------------------------------------------------------- properties


@settings(max_examples=examples(60), deadline=None)
@given(process_and_beliefs())
def test_evpi_is_non_negative_and_bounded(case):
    process, p = case
    evpi = process.evpi(p)
    q = process.state_action_utility
    assert np.all(evpi >= 0)
    assert np.all(evpi <= np.ptp(q) + 1e-9)
    np.testing.assert_allclose(
        process.meu(p) + evpi, p @ q.max(axis=1), rtol=1e-10, atol=1e-9
    )


@settings(max_examples=examples(30), deadline=None)
@given(process_and_beliefs())
def test_evpi_zero_for_certain_beliefs(case):
    process, _ = case
    np.testing.assert_allclose(process.evpi(np.eye(process.n_states)), 0, atol=1e-9)


@settings(max_examples=examples(40), deadline=None)
@given(process_and_beliefs(), st.floats(-1e3, 1e3), st.floats(-1e3, 1e3))
def test_evpi_invariant_to_utility_shift(case, shift_state, shift_action):
    process, p = case
    shifted = clone(process).set_params(
        state_utility=np.asarray(process.state_utility) + shift_state,
        action_utility=np.asarray(process.action_utility) + shift_action,
    )
    np.testing.assert_allclose(shifted.evpi(p), process.evpi(p), atol=1e-8)


@settings(max_examples=examples(40), deadline=None)
@given(process_and_beliefs(), st.randoms(use_true_random=False))
def test_evpi_invariant_to_action_permutation(case, random):
    process, p = case
    order = list(range(process.n_actions))
    random.shuffle(order)
    permuted = clone(process).set_params(
        transition=np.asarray(process.transition)[order],
        action_utility=np.asarray(process.action_utility)[order],
    )
    np.testing.assert_allclose(permuted.evpi(p), process.evpi(p), atol=1e-9)
    np.testing.assert_allclose(
        permuted.expected_utility(p), process.expected_utility(p)[:, order]
    )


# ---------------------------------------------------------------- errors


@pytest.mark.parametrize(
    "change, message",
    [
        ({"transition": np.ones((2, 2))}, "transition must be a 3-d array"),
        ({"transition": np.ones((2, 2, 3)) / 3}, "shape .n_actions, n_states"),
        ({"transition": np.full((1, 2, 2), np.nan)}, "non-finite value"),
        (
            {"transition": np.array([[[1.2, -0.2], [0, 1]]])},
            r"transition\[0, 0, 1\] = -0.2 is negative",
        ),
        (
            {"transition": np.array([[[0.5, 0.4], [0, 1]]])},
            "row 0 for action 0 sums to 0.9",
        ),
        ({"state_utility": [1.0, 2.0, 3.0]}, r"state_utility must have shape \(2,\)"),
        ({"action_utility": [1.0, 2.0]}, r"action_utility must have shape \(1,\)"),
        ({"state_utility": [1.0, np.inf]}, "state_utility has a non-finite"),
        ({"inspection_cost": -1.0}, "inspection_cost must be a finite number"),
        ({"classes": [1, 1]}, "classes must be distinct"),
        ({"action_names": ["a", "b"]}, "action_names must have 1 entries"),
    ],
)
def test_bad_process_is_rejected(change, message):
    params = {
        "transition": np.array([[[0.9, 0.1], [0.0, 1.0]]]),
        "state_utility": [1.0, -1.0],
        "action_utility": [0.0],
    }
    params.update(change)
    with pytest.raises(ValueError, match=message):
        DecisionProcess(**params).evpi([[0.5, 0.5]])


@pytest.mark.parametrize(
    "proba, message",
    [
        ([0.5, 0.5, 0, 0], "must be 2-d"),
        ([[0.5, 0.5]], "has 2 columns but the process has 4"),
        ([[0.5, 0.5, np.nan, 0]], "non-finite value in row 0"),
        ([[1.5, -0.5, 0, 0]], "outside"),
        ([[0.5, 0.4, 0, 0]], "row 0 sums to 0.9"),
    ],
)
def test_bad_beliefs_are_rejected(proba, message):
    with pytest.raises(ValueError, match=message):
        synthetic_decision_process().evpi(proba)


def test_clone_and_repr():
    process = synthetic_decision_process()
    cloned = clone(process)
    np.testing.assert_array_equal(cloned.transition, process.transition)
    assert "DecisionProcess(" in repr(process)
    assert cloned.get_params()["inspection_cost"] == 7.0


# ---------------------------------------------------------------- to_dict / JSON
def _assert_same_process(a, b):
    for name in ("transition", "state_utility", "action_utility"):
        left = np.asarray(getattr(a, name), dtype=float)
        right = np.asarray(getattr(b, name), dtype=float)
        assert left.shape == right.shape
        assert left.tobytes() == right.tobytes(), name  # bit for bit
    assert a.inspection_cost == b.inspection_cost
    assert a.classes_.tolist() == b.classes_.tolist()
    assert type(a.classes_.tolist()[0]) is type(b.classes_.tolist()[0])
    for name in ("state_names", "action_names"):
        left, right = getattr(a, name), getattr(b, name)
        assert (left is None) == (right is None)
        if left is not None:
            assert list(left) == list(right)


@pytest.mark.parametrize("factory", [synthetic_decision_process, z24_decision_process])
@pytest.mark.parametrize("labels", ["int", "str", "none"])
def test_to_dict_round_trip_is_exact(factory, labels, tmp_path):
    process = factory()
    if labels == "str":
        process.set_params(classes=np.array(["a", "b", "c", "d"]))
    elif labels == "none":
        process.set_params(classes=None, state_names=None, action_names=None)
    # Utilities with all 17 significant digits must survive.
    process.set_params(state_utility=np.asarray(process.state_utility) / 3.0)
    description = process.to_dict()
    through_json = json.loads(json.dumps(description))
    assert through_json == description
    rebuilt = DecisionProcess.from_dict(through_json)
    _assert_same_process(process, rebuilt)
    assert rebuilt.to_dict() == description
    path = tmp_path / "process.json"
    process.to_json(path)
    _assert_same_process(process, DecisionProcess.from_json(path))
    _assert_same_process(process, DecisionProcess.from_json(process.to_json()))
    beliefs = np.random.default_rng(0).dirichlet(np.ones(4), size=50)
    np.testing.assert_array_equal(rebuilt.evpi(beliefs), process.evpi(beliefs))
    if labels == "str":
        assert description["classes"] == ["a", "b", "c", "d"]
    elif labels == "int":
        assert description["classes"] == [1, 2, 3, 4]
    else:
        assert description["classes"] is None


def test_to_dict_rejects_labels_json_cannot_keep():
    process = synthetic_decision_process().set_params(classes=[0.5, 1.5, 2.5, 3.5])
    with pytest.raises(ValueError, match=r"classes\[0\] = 0.5 is neither"):
        process.to_dict()


def _good_description():
    return synthetic_decision_process().to_dict()


@pytest.mark.parametrize(
    "edit, message",
    [
        (lambda d: d.pop("transition"), r"lacks the key\(s\) \['transition'\]"),
        (lambda d: d.pop("format_version"), r"lacks the key\(s\) \['format_version'\]"),
        (lambda d: d.update(utility=[1.0]), r"unknown key\(s\) \['utility'\]"),
        (lambda d: d.update(format_version=2), "format_version 2 is not supported"),
        (lambda d: d.update(transition=[[1.0, 0.0]]), "transition must be a 3-d"),
        (
            lambda d: [rows.pop() for rows in d["transition"]],
            r"transition must have shape \(n_actions, n_states, n_states\)",
        ),
        (
            lambda d: d["transition"][0][1].pop(),
            "transition is ragged",
        ),
        (
            lambda d: d["transition"][1][2].__setitem__(0, 0.5),
            "transition row 2 for action 1 sums to 0.51",
        ),
        (lambda d: d["state_utility"].pop(), r"state_utility must have shape \(4,\)"),
        (lambda d: d["action_utility"].append(1.0), r"action_utility must have shape"),
        (lambda d: d.update(state_utility=["a"] * 4), "state_utility must be numeric"),
        (lambda d: d.update(inspection_cost="7"), "inspection_cost must be a finite"),
        (lambda d: d.update(classes=[1, 2, 3]), r"classes must have shape \(4,\)"),
        (lambda d: d.update(classes=[1, 2, "c", 4]), "mixes integer and string"),
        (lambda d: d.update(classes=[1, 2, 3, 4.0]), r"classes\[3\] = 4.0 is neither"),
        (lambda d: d.update(classes=[1, 2, 3, True]), r"classes\[3\] = True"),
        (lambda d: d.update(state_names=[1, 2, 3, 4]), r"state_names\[0\] = 1 is not"),
        (lambda d: d.update(action_names="ab"), "action_names must be a list"),
        (lambda d: d.update(action_names=["a"]), "action_names must have 2 entries"),
    ],
)
def test_from_dict_names_the_bad_entry(edit, message):
    description = _good_description()
    edit(description)
    with pytest.raises(ValueError, match=message):
        DecisionProcess.from_dict(description)


def test_from_dict_defaults_and_non_dict():
    minimal = {
        "format_version": 1,
        "transition": [[[1.0, 0.0], [0.0, 1.0]]],
        "state_utility": [1.0, 0.0],
        "action_utility": [0.0],
        "inspection_cost": 2.0,
    }
    process = DecisionProcess.from_dict(minimal)
    assert process.classes_.tolist() == [0, 1]
    assert process.state_names is None and process.action_names is None
    with pytest.raises(ValueError, match="must be a dict, got list"):
        DecisionProcess.from_dict([minimal])


def test_from_json_names_the_file(tmp_path):
    path = tmp_path / "mine.json"
    path.write_text('{"format_version": 1,', encoding="utf-8")
    with pytest.raises(ValueError, match=r"mine.json.* is not valid JSON"):
        DecisionProcess.from_json(path)
    description = _good_description()
    del description["state_utility"]
    path.write_text(json.dumps(description), encoding="utf-8")
    with pytest.raises(ValueError, match=r"mine.json.*lacks the key\(s\)"):
        DecisionProcess.from_json(path)


# ---------------------------------------------------------------- derived tables
@pytest.mark.parametrize(
    "state_utility, action_utility, message",
    [
        # Each utility is finite; their expectation overflows.
        ([1.7e308, 1.7e308], [0.0, 1.7e308], r"Q\(y, d\).* not finite .*state 0"),
        # Q is finite; the regret max_d Q - Q(., d) overflows.
        ([0.0, 0.0], [1.7e308, -1.7e308], r"max_d Q\(y, d\) - Q\(y, d\) .*state 0"),
    ],
)
def test_huge_utilities_are_rejected_not_turned_into_nan(
    state_utility, action_utility, message
):
    process = DecisionProcess(
        transition=[[[0.5, 0.5], [0.5, 0.5]], [[0.5, 0.5], [0.5, 0.5]]],
        state_utility=state_utility,
        action_utility=action_utility,
        inspection_cost=1.0,
    )
    for method in ("evpi", "should_inspect", "meu", "optimal_action"):
        with pytest.raises(ValueError, match=message):
            getattr(process, method)([[0.5, 0.5]])
    with pytest.raises(ValueError, match=message):
        _ = process.state_action_utility


def test_large_but_representable_utilities_still_work():
    process = DecisionProcess(
        transition=[[[0.5, 0.5], [0.5, 0.5]], [[1.0, 0.0], [1.0, 0.0]]],
        state_utility=[1e300, -1e300],
        action_utility=[0.0, -1e300],
    )
    evpi = process.evpi([[0.5, 0.5], [1.0, 0.0]])
    assert np.isfinite(evpi).all()
    np.testing.assert_allclose(evpi, [0.0, 0.0])


# ---------------------------------------------------------------- cached tables
def test_parameter_changes_after_a_call_are_honoured():
    process = synthetic_decision_process()
    belief = [[0.5, 0.0, 0.0, 0.5]]
    np.testing.assert_allclose(process.evpi(belief), [14.75])
    # set_params
    process.set_params(action_utility=np.array([0.0, -40.0]))
    expected = DecisionProcess(**process.get_params()).evpi(belief)
    np.testing.assert_allclose(process.evpi(belief), expected)
    assert process.evpi(belief)[0] != 14.75
    # a plain assignment
    process.inspection_cost = 100.0
    assert not process.should_inspect(belief)[0]
    # an array changed in place
    process.state_utility[3] = -750.0
    assert process.state_action_utility[3, 0] == -750.0  # failure stays failed
    # a list changed in place
    process.set_params(classes=[1, 2, 3, 4])
    process.evpi(belief)
    process.classes[0] = 9
    assert process.classes_.tolist() == [9, 2, 3, 4]
    # an invalid change is caught at the next call, not hidden by the cache
    process.set_params(transition=np.ones((2, 4, 4)))
    with pytest.raises(ValueError, match="sums to 4"):
        process.evpi(belief)


def test_a_list_of_arrays_is_validated_once_and_still_watched():
    # transition=[matrix per action] is a natural way to write a process; the
    # cache must not validate it again at every call, nor miss an in-place edit.
    process = synthetic_decision_process()
    process.set_params(transition=[np.array(m) for m in _SYNTHETIC])
    tables = process._validated()
    assert process._validated() is tables
    process.transition[1][3] = [0.0, 0.0, 0.0, 1.0]
    assert process._validated() is not tables
    np.testing.assert_array_equal(process._validated()[0][1, 3], [0, 0, 0, 1])


def test_cached_tables_are_private_and_read_only():
    transition = np.array(_SYNTHETIC)
    process = synthetic_decision_process().set_params(transition=transition)
    q = process.state_action_utility
    q[0, 0] = 1e6  # a copy: the process is unaffected
    assert process.state_action_utility[0, 0] == 9.5
    with pytest.raises(ValueError, match="read-only"):
        process.classes_[0] = 7
    assert transition.flags.writeable
    assert process.classes_ is not process.classes


def test_pickle_and_clone_drop_the_cache():
    import pickle

    process = synthetic_decision_process()
    process.evpi([[1.0, 0, 0, 0]])
    restored = pickle.loads(pickle.dumps(process))
    assert "_validated_cache" not in restored.__dict__
    np.testing.assert_array_equal(
        restored.state_action_utility, process.state_action_utility
    )
    assert "_validated_cache" not in clone(process).__dict__


def test_evpi_over_many_blocks_and_errors_name_the_global_row():
    from skrbal._decision._tables import _EVPI_BLOCK

    process = _random_process(np.random.default_rng(2), n_actions=3, n_states=4)
    n = 2 * _EVPI_BLOCK + 17
    proba = np.random.default_rng(3).dirichlet(np.ones(4), size=n)
    q = process.state_action_utility
    expected = proba @ q.max(axis=1) - (proba @ q).max(axis=1)
    np.testing.assert_allclose(process.evpi(proba), expected, atol=1e-10)
    np.testing.assert_allclose(
        process.evpi(np.asfortranarray(proba)), expected, atol=1e-10
    )
    row = _EVPI_BLOCK + 5
    bad = proba.copy()
    bad[row, 0] += 0.1
    with pytest.raises(ValueError, match=f"proba row {row} sums to"):
        process.evpi(bad)
    bad = proba.copy()
    bad[row] = [1.5, -0.5, 0.0, 0.0]
    with pytest.raises(ValueError, match=rf"proba\[{row}, 1\] = -0.5 is outside"):
        process.evpi(bad)
    bad[row] = np.nan
    with pytest.raises(ValueError, match=f"non-finite value in row {row}"):
        process.evpi(bad)
