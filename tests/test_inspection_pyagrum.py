"""The EVSI against an independent solver: pyAgrum's LIMID inference.

The influence diagram with a report node is built node by node from the
process's tables (not from ``state_action_utility``): the state ``y``, the
report ``z`` with the method's confusion as its CPT, the decision ``d``, the
next state with ``P(y' | y, d)``, and the utilities ``U(d)`` and ``U(y')``.
pyAgrum solves it twice, with and without the arc ``z -> d``; the EVSI is the
difference of the two maximum expected utilities. Skipped only when pyAgrum
is not installed.
"""

import numpy as np
import pytest

from skrbal import synthetic_decision_process, z24_decision_process
from skrbal.inspection import InspectionMethod, evsi, perfect_inspection

gum = pytest.importorskip("pyagrum")

# pyAgrum's SWIG bindings warn when their types load (Python >= 3.12).
pytestmark = pytest.mark.filterwarnings("ignore:builtin type Swig:DeprecationWarning")

# Both sides are sums of a few dozen double-precision products of
# probabilities and utilities up to 1000 in size.
ATOL = 1e-9


def _meu(process, belief, confusion, observed: bool) -> float:
    transition = np.asarray(process.transition, dtype=float)
    n_actions, n_states, _ = transition.shape
    diagram = gum.InfluenceDiagram()
    y = diagram.addChanceNode(gum.LabelizedVariable("y", "state", n_states))
    z = diagram.addChanceNode(gum.LabelizedVariable("z", "report", confusion.shape[1]))
    d = diagram.addDecisionNode(gum.LabelizedVariable("d", "action", n_actions))
    y_next = diagram.addChanceNode(gum.LabelizedVariable("y_next", "next", n_states))
    u_action = diagram.addUtilityNode(gum.LabelizedVariable("u_d", "U(d)", 1))
    u_state = diagram.addUtilityNode(gum.LabelizedVariable("u_y", "U(y')", 1))
    for tail, head in ((y, z), (y, y_next), (d, y_next), (d, u_action)):
        diagram.addArc(tail, head)
    diagram.addArc(y_next, u_state)
    if observed:
        diagram.addArc(z, d)
    diagram.cpt(y).fillWith(list(map(float, belief)))
    for i in range(n_states):
        diagram.cpt(z)[{"y": i}] = confusion[i].tolist()
        for a in range(n_actions):
            diagram.cpt(y_next)[{"y": i, "d": a}] = transition[a, i].tolist()
    for a, value in enumerate(np.asarray(process.action_utility, dtype=float)):
        diagram.utility(u_action)[{"d": a}] = [value]
    for j, value in enumerate(np.asarray(process.state_utility, dtype=float)):
        diagram.utility(u_state)[{"y_next": j}] = [value]
    inference = gum.ShaferShenoyLIMIDInference(diagram)
    inference.makeInference()
    return inference.MEU()["mean"]


def _methods(process):
    rng = np.random.default_rng(12)
    n_states = process.n_states
    crack = np.array([0.05, 0.2, 0.85, 0.95])  # P("found" | y)
    return [
        perfect_inspection(process),
        InspectionMethod(
            name="crack", cost=1.0, confusion=np.column_stack([1 - crack, crack])
        ),
        InspectionMethod(
            name="noisy", cost=1.0, confusion=rng.dirichlet(np.ones(3), size=n_states)
        ),
        InspectionMethod(
            name="uninformative",
            cost=1.0,
            confusion=np.tile([0.3, 0.5, 0.2], (n_states, 1)),
        ),
    ]


@pytest.mark.parametrize(
    "make_process", [synthetic_decision_process, z24_decision_process]
)
def test_evsi_matches_the_influence_diagram(make_process):
    process = make_process()
    rng = np.random.default_rng(3)
    beliefs = np.vstack(
        [
            [0.5, 0.0, 0.0, 0.5],
            [0.7, 0.0, 0.2, 0.1],
            [0.0, 0.0, 0.857, 0.143],
            [0.25, 0.25, 0.25, 0.25],
            rng.dirichlet(np.full(4, 0.5), size=4),
        ]
    )
    methods = _methods(process)
    values = evsi(beliefs, process, methods)
    assert values.max() > 1.0  # some report is worth something here
    for i, belief in enumerate(beliefs):
        for k, method in enumerate(methods):
            confusion = np.asarray(method.confusion, dtype=float)
            reference = _meu(process, belief, confusion, True) - _meu(
                process, belief, confusion, False
            )
            assert values[i, k] == pytest.approx(reference, abs=ATOL), (
                f"belief {i}, method {method.name}"
            )
