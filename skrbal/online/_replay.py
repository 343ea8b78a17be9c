"""How a live agent's campaign is rebuilt from its store.

The agent learns with a :class:`~skrbal._learning.Campaign` over buffers of
its steps (:mod:`skrbal._learning._steps`). Resuming replays, in order, the
commissioning fit, each result and each action recorded as taken: the model
is rebuilt from the data it learnt from, never unpickled.
"""

from __future__ import annotations

import numpy as np

from skrbal._learning import DenseSteps, Result, SparseSteps

__all__ = ["new_steps", "replay_campaign"]


def new_steps(dense: bool, n_features: int, classes):
    """Empty buffers: every step (EM and smoothing read them all) or a few."""
    kind = DenseSteps if dense else SparseSteps
    return kind(n_features, classes)


def replay_campaign(campaign, estimator, replay, dense: bool) -> None:
    """Rebuild ``campaign``'s steps and model: commissioning fit, then each result.

    ``replay`` holds every step for dense buffers; for sparse ones only
    the commissioning steps and those with a request not cancelled. Each
    result is learnt with the action stored with it (the one the campaign
    returned when it was first learnt).
    """
    classes = campaign.process.classes_
    steps = new_steps(dense, replay.agent.n_features, classes)
    X, n0 = replay.features, replay.n_commissioning
    y0 = np.array(replay.labels).astype(classes.dtype)
    actions = replay.actions.astype(np.intp)
    steps.extend(X[:n0], actions[:n0], y=y0)
    if dense:
        steps.extend(X[n0:], actions[n0:])
    else:
        for step, x in zip(replay.steps[n0:], X[n0:]):
            steps.put(int(step), x)
        steps.n_steps = replay.agent.n_steps
    campaign.fit(estimator, steps)
    for ev in replay.events:
        payload = ev.payload
        if ev.kind == "result":
            if payload["label"] is None:
                label = None
                posterior = np.array(payload["posterior"], dtype=np.float64)
            else:
                label = np.asarray([payload["label"]]).astype(classes.dtype)[0]
                posterior = None
            action = int(payload["action"])
            campaign.learn(ev.step, Result(label, posterior, action))
        elif ev.kind == "action":
            steps.record_action(ev.step, payload["action"])
