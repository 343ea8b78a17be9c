"""What a store's fleet knows: its agents' labels, as a prior for a structure."""

from __future__ import annotations

from numbers import Integral

import numpy as np

from skrbal import DecisionProcess
from skrbal.exceptions import StoreError
from skrbal.mixture import FleetPrior, PooledGMMClassifier
from skrbal.online import AgentStore

__all__ = ["FleetKnowledge"]


class FleetKnowledge:
    """The labelled data of a store's agents, and the fleet prior it gives.

    Each agent of the store is a structure of the fleet. Its labelled set is
    read as resuming the agent reads it (:meth:`AgentStore.load_replay
    <skrbal.online.AgentStore.load_replay>`, which checks the agent's event
    chain): the commissioning labels, then every label learned since (the results of its
    inspections and the routine labels recorded), in the order of the steps
    they label. :meth:`prior` learns a :class:`~skrbal.mixture.FleetPrior`
    from the structures other than the one it is for, and :meth:`classifier`
    gives a :class:`~skrbal.mixture.PooledGMMClassifier` on it, the estimator
    to commission a new structure with (with
    :meth:`Fleet.commission <skrbal.fleet.Fleet.commission>` or
    :meth:`RiskBasedAgent.commission <skrbal.online.RiskBasedAgent.commission>`).

    The prior is part of the estimator's parameters, so the agent's store
    keeps it with the agent's configuration: the agent resumes, and
    :meth:`AgentStore.verify <skrbal.online.AgentStore.verify>` checks it,
    with the prior it was commissioned on. A store records no change of an
    agent's model; to learn from what the fleet knows later, commission a
    new agent (re-commissioning) on the structure's data with
    :meth:`classifier` then.

    Parameters
    ----------
    store : AgentStore, str or path-like
        The store (SQLite file or PostgreSQL URL); it is read, never written.
    window : int, default=50
        Size of each structure's commissioning window: its first ``window``
        samples of the reference class normalise it (as
        :class:`~skrbal.mixture.FleetPrior` and the classifier take it).
    reference_class : label, default=None
        The class that normalises each structure; ``None`` is the first
        class of the agents' process (the healthy state).

    Attributes
    ----------
    store_ : AgentStore
        The open store.

    See Also
    --------
    skrbal.mixture.FleetPrior : The prior learned.
    skrbal.mixture.PooledGMMClassifier : A structure's classifier on it.

    Examples
    --------
    >>> import os, tempfile, warnings
    >>> import numpy as np
    >>> from skrbal import synthetic_decision_process
    >>> from skrbal.fleet import FleetKnowledge
    >>> from skrbal.mixture import PooledGMMClassifier
    >>> from skrbal.online import RiskBasedAgent
    >>> rng = np.random.RandomState(0)
    >>> process = synthetic_decision_process()
    >>> path = os.path.join(tempfile.mkdtemp(), "fleet.db")
    >>> warnings.simplefilter("ignore")  # states without a label warn
    >>> for s in range(3):  # three structures that saw state 2 below state 1
    ...     X = np.r_[rng.normal(10.0 * s, 1.0, (60, 1)),
    ...               rng.normal(10.0 * s - 5.0, 1.0, (5, 1))]
    ...     y = [1] * 60 + [2] * 5
    ...     RiskBasedAgent(estimator=PooledGMMClassifier(classes=[1, 2, 3, 4]),
    ...                    process=process, store=path, name=f"S{s}").fit(X, y).close()
    >>> knowledge = FleetKnowledge(path)
    >>> knowledge.names()
    ['S0', 'S1', 'S2']
    >>> prior = knowledge.prior(exclude="S2")  # S0 and S1, for S2
    >>> prior.n_structures.tolist()
    [2, 2, 0, 0]
    >>> clf = knowledge.classifier()  # for a new structure: all three
    >>> clf.fleet.n_structures.tolist()
    [3, 3, 0, 0]
    >>> knowledge.close()
    """

    def __init__(self, store, *, window: int = 50, reference_class=None):
        if isinstance(window, bool) or not isinstance(window, Integral) or window < 2:
            raise ValueError(f"window must be an integer >= 2, got {window!r}.")
        self.window = int(window)
        self.reference_class = reference_class
        self._owns_store = not isinstance(store, AgentStore)
        self.store_ = AgentStore(store) if self._owns_store else store

    def names(self) -> list[str]:
        """The structures of the fleet: the agents of the store, sorted.

        Returns
        -------
        names : list of str
        """
        return list(self.store_.agent_names())

    def classes(self, name: str) -> np.ndarray:
        """The health states of agent ``name``'s process.

        Parameters
        ----------
        name : str
            The agent.

        Returns
        -------
        classes : ndarray
        """
        process = self.store_.configuration(name)["process"]
        return DecisionProcess.from_dict(process).classes_

    def labelled(self, name: str) -> tuple[np.ndarray, np.ndarray]:
        """Agent ``name``'s labelled samples, in the order of their steps.

        The commissioning samples, then each step whose label the agent
        learned (an inspection's result or a routine label); a report that
        left the state uncertain gives no label.

        Parameters
        ----------
        name : str
            The agent.

        Returns
        -------
        X : ndarray of shape (n_labelled, n_features)
        y : ndarray of shape (n_labelled,)
            Labels, of the dtype of the process's classes.
        """
        # What resuming the agent reads (its event chain checked): the
        # features of its commissioning and requested steps, and its results.
        replay = self.store_.load_replay(name, every_step=False)
        labels = dict(enumerate(replay.labels))
        for event in replay.events:
            if event.kind == "result" and event.payload["label"] is not None:
                labels[event.step] = event.payload["label"]
        steps = np.array(sorted(labels), dtype=np.int64)
        rows = np.minimum(np.searchsorted(replay.steps, steps), len(replay.steps) - 1)
        if not np.array_equal(replay.steps[rows], steps):
            raise StoreError(
                f"store {self.store_.display_url}: agent {name!r} has a result of "
                "a step whose features it does not give."
            )
        y = np.asarray([labels[s] for s in steps.tolist()])
        return replay.features[rows], y.astype(self.classes(name).dtype)

    def records(self, exclude=None) -> list[tuple[str, np.ndarray, np.ndarray]]:
        """``(name, X, y)`` of every structure but those in ``exclude``.

        Parameters
        ----------
        exclude : str or iterable of str, default=None
            Agents left out (the structure a prior is for).

        Returns
        -------
        records : list of (str, ndarray, ndarray)
            In the order of :meth:`names`.

        Raises
        ------
        ValueError
            When the structures' processes have different states or their
            features differ in number.
        """
        left_out = {exclude} if isinstance(exclude, str) else set(exclude or ())
        unknown = left_out - set(self.names())
        if unknown:
            raise ValueError(
                f"exclude: no agent {sorted(unknown)[0]!r} in store "
                f"{self.store_.display_url}."
            )
        found, first = [], None
        for name in self.names():
            if name in left_out:
                continue
            classes = self.classes(name)
            X, y = self.labelled(name)
            if first is None:
                first = (name, classes, X.shape[1])
            elif not np.array_equal(classes, first[1]) or X.shape[1] != first[2]:
                raise ValueError(
                    f"agent {name!r} has states {classes.tolist()} and "
                    f"{X.shape[1]} features, agent {first[0]!r} "
                    f"{first[1].tolist()} and {first[2]}: a fleet's structures "
                    "share one process and one set of features."
                )
            found.append((name, X, y))
        return found

    def prior(self, exclude=None) -> FleetPrior | None:
        """The fleet prior of every structure but those in ``exclude``.

        Parameters
        ----------
        exclude : str or iterable of str, default=None
            Agents left out: the structure the prior is for, when it is in
            the store already (leave-one-out).

        Returns
        -------
        fleet : FleetPrior or None
            :meth:`FleetPrior.from_structures
            <skrbal.mixture.FleetPrior.from_structures>` of their labelled
            sets; ``None`` with fewer than two structures (no class then has
            a fleet prior).
        """
        return self._prior_of(self.records(exclude))

    def _prior_of(self, records) -> FleetPrior | None:
        if len(records) < 2:
            return None
        classes = self.classes(records[0][0])
        reference = classes[0] if self.reference_class is None else self.reference_class
        for name, _, y in records:
            if np.count_nonzero(y == reference) < 2:
                raise ValueError(
                    f"agent {name!r} has {np.count_nonzero(y == reference)} "
                    f"label(s) of the reference state {reference!r}; each "
                    "structure of a fleet is normalised by its first healthy "
                    "labels and needs at least 2."
                )
        return FleetPrior.from_structures(
            [(X, y) for _, X, y in records],
            classes=classes,
            reference_class=self.reference_class,
            window=self.window,
        )

    def classifier(self, exclude=None, **params) -> PooledGMMClassifier:
        """A structure's classifier on what the other structures know.

        Parameters
        ----------
        exclude : str or iterable of str, default=None
            As for :meth:`prior`.
        **params
            Other parameters of :class:`~skrbal.mixture.PooledGMMClassifier`
            (``transfer_prior``, ``classes``, ...); ``fleet``, ``window``
            and ``reference_class`` are this object's.

        Returns
        -------
        classifier : PooledGMMClassifier
            Unfitted, with ``fleet`` the :meth:`prior` (``None`` with fewer
            than two other structures: the structure learns alone) and, unless
            given, ``classes`` the states of the structures' process.
        """
        records = self.records(exclude)
        if records and "classes" not in params:
            params["classes"] = self.classes(records[0][0]).tolist()
        fleet = self._prior_of(records)
        return PooledGMMClassifier(
            fleet=fleet,
            window=self.window,
            reference_class=self.reference_class,
            **params,
        )

    def close(self) -> None:
        """Close the store, if this object opened it."""
        if self._owns_store:
            self.store_.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
