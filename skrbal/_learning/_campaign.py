"""One campaign of risk-based active learning: its running state, for every driver.

A :class:`Campaign` holds what changes while a structure is monitored: the
model and its update rule over the steps seen (:mod:`skrbal._learning._steps`),
the requests (a :class:`RequestBook`: open, answered, cancelled, expired),
the budget policy's state, and the count of steps the cap on open requests
blocked. It decides a block of steps with the decision kernel (counting the
pending results as fantasies when asked), opens the requests, learns results
(labels and reports) and returns the action each calls for, and expires the
requests past their timeout.

:class:`~skrbal.active.RiskBasedLearner` and
:class:`~skrbal.online.RiskBasedAgent` each hold one; they differ only in
where results come from (the record's oracle, or the caller) and where events
are written (the learner's history, the agent's store). A campaign writes
nothing: a driver that must record a change before it happens passes a
``commit`` callable, and the change is made only if ``commit`` returns.
"""

from __future__ import annotations

import copy
import warnings
from numbers import Integral, Real

import numpy as np

from skrbal._decision import DecisionProcess
from skrbal._learning._decision_state import DecisionState
from skrbal._learning._fantasy import MAX_FANTASISED, PendingFantasies
from skrbal._learning._history import (
    HistoryFantasies,
    HistoryPrior,
    check_history_prior,
    class_weights,
)
from skrbal._learning._kernel import (
    PENDING_VALUES,
    BlockDecisions,
    DecisionKernel,
    Result,
    check_anchor_methods,
)
from skrbal._learning._repairs import RepairedClassWeights, concentration
from skrbal._learning._requests import RequestBook
from skrbal._learning._snapshot import AfterState, model_predictive, snapshot_value
from skrbal._learning._updates import check_learning_params, clone_for, make_update
from skrbal.inspection import check_methods

__all__ = [
    "Campaign",
    "check_campaign_params",
    "reissue",
    "warning_texts",
]


def check_campaign_params(
    *,
    process,
    budget,
    inspections,
    semi_supervised,
    update,
    em_start,
    max_open_requests,
    pending_value,
    request_timeout=None,
    history_prior=0.0,
) -> None:
    """Name any invalid parameter that the learner and the agent share.

    ``budget`` is a :class:`~skrbal.budget.BudgetPolicy` or ``None`` (the
    driver checks its other options first); with ``inspections``, the
    methods must fit the process, and smoothing's anchors must reveal the
    state.
    """
    if not isinstance(process, DecisionProcess):
        raise TypeError(
            f"process must be a DecisionProcess, got {type(process).__name__}."
        )
    process._validated()
    check_learning_params(semi_supervised, update, em_start)
    check_history_prior(history_prior)
    if pending_value not in PENDING_VALUES:
        raise ValueError(
            f"pending_value must be one of {PENDING_VALUES}, got {pending_value!r}."
        )
    if max_open_requests is not None and (
        not isinstance(max_open_requests, Integral)
        or isinstance(max_open_requests, bool)
        or max_open_requests < 1
    ):
        raise ValueError(
            "max_open_requests must be None or an integer >= 1, got "
            f"{max_open_requests!r}."
        )
    if request_timeout is not None and (
        isinstance(request_timeout, bool)
        or not isinstance(request_timeout, Real)
        or not np.isfinite(request_timeout)
        or request_timeout <= 0
    ):
        raise ValueError(
            "request_timeout must be None or a finite number > 0, got "
            f"{request_timeout!r}."
        )
    if budget is not None:
        budget.initial_state()  # names any invalid policy parameter
    if inspections is not None:
        check_methods(inspections, process)
        if semi_supervised == "smoothing":
            check_anchor_methods(inspections, process)


def _stated_states(model) -> list:
    """The states a model (or a Pipeline's step) states a prior for."""
    if model is None or not hasattr(model, "get_params"):
        return []
    stated = []
    for key, value in model.get_params(deep=True).items():
        if key.split("__")[-1] == "class_priors" and isinstance(value, dict):
            stated.extend(value)
    return stated


def warning_texts(caught) -> list:
    """The warnings caught while learning, as an event stores them."""
    return [f"{w.category.__name__}: {w.message}" for w in caught]


def reissue(caught) -> None:
    """Issue caught warnings to the caller, once the change is committed."""
    for w in caught:
        warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)


class Campaign:
    """The running state of one campaign, shared by the learner and the agent.

    Parameters
    ----------
    process : DecisionProcess
        The decision (validated by the driver).
    inspections : list of InspectionMethod or None
        The inspection methods; ``None`` is the process's perfect inspection.
    budget : BudgetPolicy or None
        ``None`` is :class:`~skrbal.budget.CostThreshold`.
    semi_supervised, update, em_start, initial_state
        The update rule (:func:`~skrbal._learning.make_update`).
    max_open_requests : int or None
        At most this many requests open at once.
    pending_value : {'fantasy', 'ignore'}
        Whether a request's value counts the pending results as fantasies:
        those of the oldest open requests, at most
        :data:`~skrbal._learning._fantasy.MAX_FANTASISED` (32).
    request_timeout : float or None
        Age (in the budget's time) at which an open request expires.
    follow_up : bool, default=False
        Value imperfect methods with a perfect follow-up and name it in the
        results that warrant one (:class:`DecisionKernel`).
    history_prior : float, default=0.0
        The share of the process's prediction from the labelled history in
        the class prior of the beliefs (:class:`HistoryPrior`); 0 keeps the
        model's beliefs.
    history_filter : bool, default=False
        With ``history_prior``, carry the prediction from each step's belief
        (a forward filter of the stream, :class:`HistoryPrior`'s
        ``filtering``) rather than from the last label alone.

    Attributes
    ----------
    kernel : DecisionKernel
    rule : update rule
    model : classifier
        The current model (after :meth:`fit`).
    steps : RecordedSteps, DenseSteps or SparseSteps
        The steps the rule reads (after :meth:`fit`).
    decisions : DecisionState
        The requests, the budget policy's running state and the steps the
        cap on open requests blocked (also as ``requests``, ``budget_state``
        and ``n_blocked``).
    fantasies : PendingFantasies
        The model copies that learnt the pending results, kept while the
        model and the fantasised requests stay the same.
    """

    def __init__(
        self,
        process,
        *,
        inspections=None,
        budget=None,
        semi_supervised=None,
        update="auto",
        em_start="labelled",
        initial_state=None,
        max_open_requests=None,
        pending_value="fantasy",
        request_timeout=None,
        follow_up=False,
        history_prior=0.0,
        history_filter=False,
    ):
        self.process = process
        self.inspections = inspections
        self.kernel = DecisionKernel(
            process, inspections, budget, max_open_requests, follow_up
        )
        self.budget = self.kernel.budget
        self.rule = make_update(
            semi_supervised, process, update, initial_state, em_start=em_start
        )
        self.pending_value = pending_value
        self.history = (
            HistoryPrior(process, history_prior, filtering=history_filter)
            if history_prior > 0
            else None
        )
        #: The class weights after the repairs the campaign is told of.
        self.repaired = RepairedClassWeights(process)
        #: The requests, the budget's state and the blocked count.
        self.decisions = DecisionState(self.kernel, request_timeout)
        self.model = None
        self.steps = None
        self.fantasies = PendingFantasies(process)
        #: Whether :meth:`learn` gives its ``commit`` the snapshot after the
        #: result (a driver whose store keeps snapshots sets it).
        self.keeps_snapshots = False
        # Bumped whenever the model changes (it may learn in place), so
        # that fantasies are kept only for the model they were built on.
        self._model_version = 0

    # -------------------------------------------------------------- #
    def fit(self, estimator, steps):
        """The first model: ``estimator`` cloned for the process, fitted on ``steps``.

        The budget's state starts afresh. Returns the model.
        """
        self.steps = steps
        model = self.rule.prepare(clone_for(estimator, self.process))
        self.model = self.rule.initial_fit(model, steps.stream_state())
        self._model_version += 1
        self.decisions.start()
        if self.history is not None:
            class_weights(self.model, self.process.classes_)  # names a model without
        return self.model

    def beliefs(self, X, *, step=None, **kwargs) -> np.ndarray:
        """The beliefs over ``X``, a block of steps from ``step`` on.

        The model's (:meth:`DecisionKernel.beliefs`), their class weights
        counting the labels taken before a repair the campaign was told of
        as the repair left their state (:class:`RepairedClassWeights`); with
        ``history_prior``, their class prior is the process's prediction from
        the labelled history (:class:`HistoryPrior`). ``step`` is the block's
        first step (``None``: the step after those kept).
        """
        proba = self.kernel.beliefs(self.model, X, **kwargs)
        if step is None:
            step = self.steps.n_steps
        state = self.steps.stream_state()
        classes = self.process.classes_
        if self.history is None:
            return self.repaired.beliefs(
                proba, concentration(self.model, classes), state, step
            )
        weights = class_weights(self.model, classes)
        # The model's share of the class prior counts the pre-repair labels
        # as repaired too (one row of weights per step then).
        repaired = self.repaired.weights(
            concentration(self.model, classes), state, step, proba.shape[0]
        )
        if repaired is not None:
            proba = self.repaired.beliefs(
                proba, concentration(self.model, classes), state, step
            )
            weights = repaired / repaired.sum(axis=1, keepdims=True)
        return self.history.beliefs(proba, weights, state, step)

    def decide(
        self,
        X,
        proba,
        times,
        *,
        available=None,
        first_only: bool = False,
        plan=None,
        commit=None,
    ) -> BlockDecisions:
        """Decide a block of steps; keep the budget's state and the blocked count.

        ``X`` and ``proba`` are the block's features and beliefs
        (:meth:`beliefs`). With ``pending_value='fantasy'`` and no fixed
        ``plan``, the results of the oldest open requests (at most
        :data:`~skrbal._learning._fantasy.MAX_FANTASISED`) are fantasised:
        the older requests' results are due first. ``commit``,
        when given, is called with the decisions before anything changes;
        if it raises, nothing does. The requests are opened by
        :meth:`open_requests`.
        """
        fantasies = None
        if self.requests.n_open and plan is None and self.pending_value == "fantasy":
            fantasies = self._fantasise(X)
            if fantasies is not None and self.history is not None:
                fantasies = self._under_history(fantasies, proba)
        return self.decisions.decide(
            proba,
            times,
            fantasies=fantasies,
            available=available,
            first_only=first_only,
            plan=plan,
            commit=commit,
        )

    def _fantasise(self, X):
        """The block's beliefs after the fantasised pending results."""
        self._learn_fantasies()
        return self.fantasies.predict(X)

    def _learn_fantasies(self) -> list[int]:
        """Fantasise the oldest open requests' results, unless done for this
        model and these requests; their ids."""
        pending = self.requests.oldest_open(MAX_FANTASISED)
        key = (self._model_version, tuple(pending))
        if key != self.fantasies.key:
            X_pending = self.steps.rows(self.requests.steps_of(pending))
            self.fantasies.learn(self.model, X_pending, key)
        return pending

    def snapshot(self) -> dict | None:
        """What deciding the next block needs of the model, as JSON-ready values.

        :func:`~skrbal._learning._snapshot.snapshot_value` of the model and,
        when the pending results count (``pending_value='fantasy'`` with
        requests open), of the fantasised requests' copies. From these, the
        beliefs and the fantasised beliefs of a block, hence its decisions,
        are computed bit for bit without the model (issue 28.25). ``None``
        when the beliefs are not such a predictive (another kind of model, a
        class with a directed prior), the class prior follows the history
        (``history_prior``) or a repair the campaign was told of moves the
        class weights (:class:`RepairedClassWeights`).
        """
        if self.model is None or self.history is not None or self._told_repair():
            return None
        pending = ()
        if self.requests.n_open and self.pending_value == "fantasy":
            pending = self._learn_fantasies()
        return snapshot_value(self.model, self.fantasies, pending)

    def snapshot_after(self, *, model=None, closed=(), opened=()) -> AfterState | None:
        """The snapshot after a call that has not changed anything yet.

        ``model``: the model the call will take (a result's copy; ``None``:
        the same model); ``closed``: the requests it will close (answered,
        cancelled, expired); ``opened``: ``(request_id, row)`` pairs of the
        requests it will open, with their features. ``None`` when the call
        changes neither the model nor the fantasised requests (the stored
        snapshot still holds), or there is no snapshot (:meth:`snapshot`).
        The copies of the fantasised requests after the call are learnt here;
        :meth:`keep_snapshot` keeps them once the call commits.
        """
        book, rows = self.requests, {int(i): row for i, row in opened}
        before, after = [], []
        if self.pending_value == "fantasy":
            before, after = self.decisions.fantasised(MAX_FANTASISED, closed, rows)
        if model is None and after == before:
            return None
        model = self.model if model is None else model
        if (
            self.history is not None
            or self._told_repair()
            or model_predictive(model) is None
        ):
            return None
        fantasies = None
        if after:
            fantasies = PendingFantasies(self.process)
            if any(i in rows for i in after):
                X = np.stack(
                    [
                        rows[i] if i in rows else self.steps.rows([book[i].step])[0]
                        for i in after
                    ]
                )
            else:  # as _learn_fantasies reads them
                X = self.steps.rows(book.steps_of(after))
            fantasies.learn(model, X)
        value = snapshot_value(model, fantasies, after)
        return None if value is None else AfterState(value, tuple(after), fantasies)

    def _told_repair(self) -> bool:
        """Whether a repair the campaign was told of moves the class weights,
        which a snapshot of the model does not hold."""
        told = self.repaired.repairs(self.steps.stream_state(), self.steps.n_steps)
        return bool(told[0].size)

    def keep_snapshot(self, after: AfterState | None) -> None:
        """Keep the copies :meth:`snapshot_after` learnt, once its call committed."""
        if after is not None and after.fantasies is not None:
            self.fantasies.adopt(after.fantasies, (self._model_version, after.pending))

    def _under_history(self, fantasies, proba):
        """The fantasised beliefs with each copy's class weights replaced by
        the block's prior from the history, as the model's are.

        For beliefs that are not the last block's (whose prior is unknown),
        the pending results are ignored (``None``).
        """
        history = self.history
        if history.block is None or history.block[0] is not proba:
            return None
        classes = self.process.classes_
        weights = np.stack([class_weights(m, classes) for m in self.fantasies.models])
        return HistoryFantasies(fantasies, weights, history)

    def open_requests(self, first: int, decided: BlockDecisions, proba, times):
        """Open the requests of a block decided from step ``first``; their ids."""
        return self.decisions.open_requests(first, decided, proba, times)

    def next_request_ids(self, decided: BlockDecisions) -> np.ndarray:
        """The ids :meth:`open_requests` will give the block's requests."""
        return self.decisions.next_request_ids(decided)

    def stall_report(self, n_blocked: int) -> int:
        """Blocked inspections in this stall when a report is due, else 0
        (:meth:`DecisionState.stall_report`)."""
        return self.decisions.stall_report(n_blocked)

    def overdue(self, now: float) -> list[int]:
        """Open requests past ``request_timeout`` at ``now`` (:meth:`expire` them)."""
        return self.decisions.overdue(now)

    def next_expiry(self) -> float | None:
        """When the oldest open request expires (None: no timeout, none open)."""
        return self.decisions.next_expiry()

    def expire(self, ids) -> None:
        """Expire the requests ``ids``: their slots free; a late result is taken."""
        self.decisions.expire(ids)

    @property
    def requests(self) -> RequestBook:
        """The requests (:attr:`DecisionState.requests`)."""
        return self.decisions.requests

    @requests.setter
    def requests(self, book: RequestBook) -> None:
        self.decisions.requests = book

    @property
    def budget_state(self) -> dict | None:
        """The budget policy's running state (:attr:`DecisionState.budget_state`)."""
        return self.decisions.budget_state

    @budget_state.setter
    def budget_state(self, state: dict) -> None:
        self.decisions.budget_state = state

    @property
    def n_blocked(self) -> int:
        """Steps the cap on open requests blocked (:attr:`DecisionState.n_blocked`)."""
        return self.decisions.n_blocked

    # -------------------------------------------------------------- #
    def simulate_result(self, request_id: int, true_state, random_state) -> Result:
        """The result of request ``request_id`` when its step's state is known."""
        request = self.requests[request_id]
        k = 0 if request.method is None else request.method
        return self.kernel.simulate_result(
            k, request.belief, true_state, random_state, known=self.known_states()
        )

    def read_result(self, k, belief, *, label=None, report=None) -> Result:
        """A checked label or report of method ``k`` read by the kernel.

        A report is read with the states labelled so far
        (:meth:`known_states`): its mass on a never-labelled state it counts
        against is not learnt.
        """
        known = None if report is None else self.known_states()
        return self.kernel.read_result(
            0 if k is None else k, belief, label=label, report=report, known=known
        )

    def known_states(self) -> np.ndarray:
        """The states whose share of a report's posterior is always learnt.

        Those with a label learnt so far, and those the model states no
        prior for: a report's tail mass is kept from a state only where the
        belief rests on a statement (``class_priors``) and no label, the
        state that the mass would drag from where it was stated. With the
        broad default prior there is no statement to keep, and keeping the
        mass from it measured worse (``benchmarks/results/unseen_evsi.md``).
        """
        state = self.steps.stream_state()
        labels = np.asarray(state.y[state.labelled]) if state.labelled else []
        return np.isin(self.kernel.classes, labels) | ~np.isin(
            self.kernel.classes, _stated_states(self.model)
        )

    def answer(self, request_id: int, result: Result, *, commit=None) -> int:
        """Learn request ``request_id``'s result and close it; the action.

        See :meth:`learn` for ``commit``.
        """
        step = self.requests[request_id].step
        action = self.learn(step, result, commit=commit, closing=request_id)
        self.requests.close(request_id, "done")
        return action

    def learn(self, step: int, result: Result, *, commit=None, closing=None) -> int:
        """Teach ``result`` at ``step`` with the update rule; the action it calls for.

        A result that names a state is learnt as a label, any other as soft
        evidence (its posterior). Without ``commit`` the model learns in
        place. With ``commit``, a callable taking the texts of the warnings
        raised while learning and the snapshot after the call (a dict, or
        ``None`` without :attr:`keeps_snapshots` or a snapshot), the rule
        learns on copies, ``commit`` is called, and only if it returns does
        the campaign take the new model (the warnings are then issued);
        otherwise nothing changes. ``closing``: the request the result
        closes (its fantasy leaves the snapshot).
        """
        if commit is None:
            self._model_version += 1  # before: the model learns in place
            self.model = self._teach(self.model, self.rule, step, result)
            return result.action
        rule, undo = copy.deepcopy(self.rule), []
        try:
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                model = copy.deepcopy(self.model)
                model = self._teach(model, rule, step, result, undo)
            after = None
            if self.keeps_snapshots:
                closed = () if closing is None else (closing,)
                after = self.snapshot_after(model=model, closed=closed)
            commit(warning_texts(caught), None if after is None else after.value)
        except BaseException:
            for restore in undo:
                restore()
            raise
        reissue(caught)
        self.model, self.rule = model, rule
        self._model_version += 1
        self.keep_snapshot(after)
        return result.action

    def answer_with_follow_up(
        self, request_id: int, result: Result, follow_up: Result
    ) -> int:
        """Close request ``request_id`` with its report followed up; the action.

        ``follow_up`` is the result of the perfect inspection that
        ``result.follow_up`` asked for at the same step: the state it reveals
        is learnt (the report adds nothing once the state is known), and the
        follow-up is booked as a request made and answered at once.
        """
        request = self.requests[request_id]
        action = self.learn(request.step, follow_up)
        self.requests.close(request_id, "done")
        self.requests.add_done(request.step, result.follow_up)
        return action

    def learn_routine(self, step: int, result: Result, k, *, commit=None) -> int:
        """Learn a routine label (an inspection not requested); the action.

        It is learnt as a request's result (see :meth:`learn` for
        ``commit``) and booked as a request made and answered at once, with
        method ``k``. The budget's state is not charged: its policy did not
        decide it.
        """
        action = self.learn(step, result, commit=commit)
        self.requests.add_done(step, k)
        return action

    def _teach(self, model, rule, step, result, undo=None):
        steps = self.steps
        if result.label is None:
            saved = steps.learn_report(step, result.action)
            if undo is not None:
                undo.append(lambda: steps.unreport(step, saved))
            return rule.learn_report(
                model, steps.stream_state(), step, result.posterior
            )
        saved = steps.learn_label(step, result.label, result.action)
        if undo is not None:
            undo.append(lambda: steps.restore(step, saved))
        return rule.learn(model, steps.stream_state(), step)
