"""What a live agent learns, and how it is rebuilt from its store.

The agent keeps its steps in buffers (:mod:`skrbal._learning._steps`) and
learns with the update rules of the decision kernel (:mod:`skrbal._learning`).
Resuming replays, in order, the commissioning fit, each result and each action
recorded as taken: the model is rebuilt from the data it learnt from, never
unpickled.
"""

from __future__ import annotations

import numpy as np

from skrbal._learning import clone_for, make_update
from skrbal._learning._steps import DenseSteps, SparseSteps

__all__ = [
    "dense",
    "learn_label",
    "learn_report",
    "new_buffers",
    "new_model",
    "replay_agent",
]


def new_model(agent, buffers):
    """The agent's update rule (set as ``agent._update``) and its first model."""
    agent._update = make_update(
        agent.semi_supervised,
        agent.process,
        agent.update,
        agent.initial_state,
        em_start=agent.em_start,
    )
    model = agent._update.prepare(clone_for(agent.estimator, agent.process))
    return agent._update.initial_fit(model, buffers.stream_state())


def dense(agent) -> bool:
    """Whether the update rule reads every step (EM, smoothing)."""
    return agent.semi_supervised is not None


def new_buffers(agent, n_features):
    """Empty buffers of the kind the agent's update rule reads."""
    kind = DenseSteps if dense(agent) else SparseSteps
    return kind(n_features, agent.process.classes_)


def replay_agent(agent, replay):
    """Rebuild buffers and model: commissioning fit, then each result.

    ``replay`` holds every step for dense buffers; for sparse ones only
    the commissioning steps and those with a request not cancelled.
    """
    classes = agent.process.classes_
    buffers = new_buffers(agent, replay.agent.n_features)
    X, n0 = replay.features, replay.n_commissioning
    y0 = np.array(replay.labels).astype(classes.dtype)
    actions = replay.actions.astype(np.intp)
    buffers.extend(X[:n0], actions[:n0], y=y0)
    if dense(agent):
        buffers.extend(X[n0:], actions[n0:])
    else:
        for step, x in zip(replay.steps[n0:], X[n0:]):
            buffers.put(int(step), x)
        buffers.n_steps = replay.agent.n_steps
    model = new_model(agent, buffers)
    for ev in replay.events:
        payload = ev.payload
        if ev.kind == "result" and payload["label"] is None:
            posterior = np.array(payload["posterior"], dtype=np.float64)
            model = learn_report(
                agent, model, agent._update, buffers, ev.step, posterior
            )
        elif ev.kind == "result":
            label = np.asarray([payload["label"]]).astype(classes.dtype)
            model = learn_label(
                agent, model, agent._update, buffers, ev.step, label[0]
            )[0]
        elif ev.kind == "action":
            buffers.record_action(ev.step, payload["action"])
    return buffers, model


def learn_label(agent, model, rule, buffers, step, label):
    """Teach ``label`` at ``step`` with the update rule (mutates both).

    Returns the model and what ``buffers.restore`` needs to undo it.
    """
    action = agent.process.perfect_information_action([label])[0]
    saved = buffers.learn_label(step, label, action)
    return rule.learn(model, buffers.stream_state(), step), saved


def learn_report(agent, model, rule, buffers, step, posterior, undo=None):
    """Teach the posterior of a report at ``step`` as soft evidence.

    Mutates the model, the rule and the buffers; appends to ``undo`` a
    function that restores the buffers.
    """
    action = agent.process.optimal_action(posterior[None])[0]
    saved = buffers.learn_report(step, action)
    if undo is not None:
        undo.append(lambda: buffers.unreport(step, saved))
    return rule.learn_report(model, buffers.stream_state(), step, posterior)
