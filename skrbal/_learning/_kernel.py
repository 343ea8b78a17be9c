"""One decision step of risk-based active learning, for every driver.

:class:`~skrbal.active.RiskBasedLearner` (a recorded stream, walked offline)
and :class:`~skrbal.online.RiskBasedAgent` (a live feed) decide with the same
kernel, so that a study measures exactly what an agent deploys:

1. beliefs over the health state from the model (:meth:`DecisionKernel.beliefs`);
2. the value of inspecting: the EVPI, or with several inspection methods the
   EVSI of the method of largest net value (:meth:`DecisionKernel.method_values`);
3. the budget policy's scan over that value, where an inspection is possible
   (:meth:`DecisionKernel.decide`);
4. the result of an inspection, a label or a report, read into what the model
   learns and the action it calls for (:meth:`DecisionKernel.read_result`).

The drivers differ only in when results arrive: the learner learns each result
before the next step (``first_only=True``: a block of steps ends at its first
request), the agent when the caller records it.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from skrbal._labels import label_positions
from skrbal._lazy import LazyModule
from skrbal._learning._fantasy import Fantasies, PendingFantasies, top_combinations
from skrbal.exceptions import ImpossibleReportError

# The kernel decides with a process's tables and a budget's rule, which import
# numpy alone (skrbal._decision._tables, skrbal.budget._scan), so that the
# command line's decision step does not import scikit-learn (issue 28.25).
# Inspection methods, and the default policy, are scikit-learn estimators:
# imported only by a kernel that has them.
inspection = LazyModule("skrbal.inspection")
budgets = LazyModule("skrbal.budget")

__all__ = [
    "PENDING_VALUES",
    "BlockDecisions",
    "DecisionKernel",
    "Fantasies",
    "Result",
    "check_anchor_methods",
    "reveals_state",
    "top_combinations",
]

#: How the value of a request counts the results still pending.
PENDING_VALUES = ("fantasy", "ignore")
# Steps scanned by one call of the budget policy while nothing is requested;
# the chunk doubles up to _MAX_CHUNK after a chunk without a request, so one
# block costs O(steps + requests x _FIRST_CHUNK), never requests x steps.
_FIRST_CHUNK = 256
_MAX_CHUNK = 65536


def reveals_state(confusion) -> bool:
    """Whether every report of a confusion model names one state for sure.

    Such a method's reports are labels: each report column has a single
    non-zero entry, and it is 1.
    """
    confusion = np.asarray(confusion)
    return bool(
        np.all((confusion == 0) | (confusion == 1))
        and np.all(np.count_nonzero(confusion, axis=0) <= 1)
    )


def check_anchor_methods(inspections, process) -> None:
    """Smoothing anchors its segments at labels: every method must reveal the state."""
    for method, confusion in zip(
        inspections, inspection.check_methods(inspections, process)
    ):
        if not reveals_state(confusion):
            raise ValueError(
                "semi_supervised='smoothing' anchors its segments at known "
                f"labels; inspection method {method.name!r} is imperfect "
                "(its reports do not reveal the state), so its reports "
                "are not labels. Use semi_supervised='em' or None."
            )


@dataclass(slots=True)
class BlockDecisions:
    """What the kernel decided for a block of consecutive steps.

    Attributes
    ----------
    n_decided : int
        Steps decided: the whole block, or with ``first_only`` up to and
        including the first request.
    evpi : ndarray of shape (n_decided,)
        EVPI of each decided step's belief.
    action : ndarray of int of shape (n_decided,)
        The optimal action under each belief.
    requested : ndarray of int
        Positions (in the block) of the steps to inspect, increasing.
    methods : ndarray of int
        The inspection method of each request (0 without methods).
    budget_state : dict or None
        The budget policy's state after the decided steps (``None`` for a
        fixed plan).
    n_blocked : int
        Steps the policy (or plan) wanted to inspect but could not, every
        allowed request being open (``max_open_requests``).
    """

    n_decided: int
    evpi: np.ndarray
    action: np.ndarray
    requested: np.ndarray
    methods: np.ndarray
    budget_state: dict | None
    n_blocked: int = 0


@dataclass(slots=True)
class Result:
    """An inspection's result, read for learning and acting.

    Attributes
    ----------
    label : label or None
        The state the result reveals, learnt as a label; ``None`` when it
        leaves the state uncertain (soft evidence).
    posterior : ndarray of shape (n_states,) or None
        What is learnt from a report (one-hot for a report that reveals the
        state): the posterior over the states after it, less the mass of
        the never-labelled states the report counts against
        (:func:`~skrbal.inspection.learnable_posterior`); ``None`` without
        inspection methods. The action is that of the full posterior.
    action : int
        The optimal action once the result is known.
    report : outcome or None
        The report, with inspection methods.
    follow_up : int or None
        With ``follow_up``: the method (index) that should inspect the step
        again, because the posterior's EVPI exceeds its cost; ``None`` when
        the posterior is to be acted on as it is.
    """

    label: object
    posterior: np.ndarray | None
    action: int
    report: object = None
    follow_up: int | None = None


class DecisionKernel:
    """Beliefs -> value -> method -> budget -> request, and results read back.

    Parameters
    ----------
    process : DecisionProcess or ProcessTables
        The decision and its inspection cost (validated by the caller).
    inspections : list of InspectionMethod or None
        The inspection methods; ``None`` is one perfect inspection at the
        process's cost.
    budget : BudgetPolicy, ScanRule or None
        Which requests to make; ``None`` is :class:`~skrbal.budget.CostThreshold`.
    max_open_requests : int or None
        At most this many requests awaiting a result at once.
    follow_up : bool, default=False
        Value each imperfect method as "it, then the cheapest perfect method
        where its report warrants one" (:func:`~skrbal.inspection.evsi` with
        ``follow_up=True``), and name that follow-up in the :class:`Result`
        of a report whose posterior's EVPI exceeds the perfect method's cost.
    """

    def __init__(
        self,
        process,
        inspections=None,
        budget=None,
        max_open_requests=None,
        follow_up: bool = False,
    ):
        self.process = process
        self.inspections = inspections
        self.budget = budgets.CostThreshold() if budget is None else budget
        # The kernel scans arrays it built and states the policy returned:
        # unchecked.
        self._scan_options = {"check_params": False, "check_input": False}
        self._needs_beliefs = bool(getattr(self.budget, "needs_beliefs", False))
        self.max_open_requests = max_open_requests
        if inspections is None:
            self.costs = np.array([float(process.inspection_cost)])
            self.reveals = [True]
        else:
            confusions = inspection.check_methods(inspections, process)
            #: Each method's confusion matrix, rows in the process's states.
            self.confusions = confusions
            self.costs = np.array([m.cost_ for m in inspections])
            self.reveals = [reveals_state(c) for c in confusions]
        self.follow_up = bool(follow_up)
        #: The method that follows up an imperfect report, and its cost.
        self._follow_up = None
        if self.follow_up:
            if inspections is None:
                raise ValueError(
                    "follow_up needs inspections: an imperfect method to follow "
                    "up and a perfect one to follow up with."
                )
            cost = inspection.follow_up_cost(inspections, process)
            revealing = [
                k
                for k, reveals in enumerate(self.reveals)
                if reveals and self.costs[k] == cost
            ]
            self._follow_up = (revealing[0], cost)
        self.classes = process.classes_
        self._seen_classes = (None, None)
        # The policy's parameters are checked once here, not at every scan
        # of a piece of the stream (the learner scans once per inspection).
        self.budget.initial_state()
        #: The perfect-information action of each state, in the states' order.
        self.perfect_actions = process.perfect_information_action(self.classes)
        self._perfect = dict(zip(self.classes.tolist(), self.perfect_actions))
        # EVPI and EVSI are differences of expected utilities: a value within
        # a few ulps of the utilities' scale is rounding, not information. It
        # is read as 0, so that a policy that ranks values (a quantile) does
        # not rank noise, and a block predicted at once decides as the same
        # steps predicted one by one (their rounding differs).
        self._noise = process.value_tolerance
        #: Each action's utility in each state, for the actions of beliefs
        #: that :meth:`DecisionProcess.evpi` has just validated.
        self._utilities = process._validated()[1]

    # -------------------------------------------------------------- #
    def beliefs(self, model, X, *, first: int = 0, rows: str = "X") -> np.ndarray:
        """The model's beliefs over ``X``, columns in the process's states.

        A row without finite beliefs (features the model cannot represent,
        such as 1e308) is named as ``rows`` row ``first + i``.
        """
        proba = model.predict_proba(X)
        if not np.isfinite(proba).all():
            i = int(np.argmin(np.isfinite(proba).all(axis=1)))
            raise ValueError(
                f"{rows} row {first + i}: {type(model).__name__} gives no finite "
                "belief for it; its features are probably beyond what the model "
                "can represent."
            )
        classes = model.classes_
        # Whether the columns already are the process's states, worked out
        # once per classes_ array (partial_fit keeps the model's).
        seen, aligned = self._seen_classes
        if classes is not seen:
            aligned = np.array_equal(classes, self.classes)
            self._seen_classes = (classes, aligned)
        if aligned:
            return proba  # evpi and optimal_action validate it
        return self.process.align_proba(proba, classes=classes)

    def method_values(
        self, proba, evpi, fantasies=None
    ) -> tuple[np.ndarray, np.ndarray]:
        """Per step: the method of largest net value and its EVSI.

        With ``fantasies`` (requests awaiting results), each method's value
        is the smaller of its value now and its expected value once the
        pending results are in: a pending result can make a request
        redundant, never more urgent (see :meth:`fantasise`).

        Without ``inspections`` the method is the process's perfect
        inspection and its value the EVPI. A value within rounding of zero
        (relative to the utilities) is 0. The argmax is that of
        :func:`~skrbal.inspection.choose_inspection` (ties to the lowest
        index; :meth:`DecisionProcess.best_method`), whether or not the net
        value is positive: the budget policy decides that.
        """
        if self.inspections is None:
            value = evpi
            # A value of 0 (within rounding) stays 0 whatever the pending
            # results: only the other rows are predicted by the copies.
            rows = None if fantasies is None else np.flatnonzero(evpi > self._noise)
            if rows is not None and rows.size:
                after = self._after(fantasies.at(rows), self.process.evpi)
                value = evpi.copy()
                value[rows] = np.minimum(evpi[rows], fantasies.weights @ after)
            best = np.zeros(evpi.shape[0], dtype=np.intp)
        else:
            values = self._evsi(proba)
            if fantasies is not None:
                after = self._after(fantasies.at(slice(None)), self._evsi)
                expected = np.tensordot(fantasies.weights, after, axes=1)
                values = np.minimum(values, expected)
            return self.process.best_method(values, self.costs)
        return best, np.where(value > self._noise, value, 0.0)

    def _evsi(self, proba):
        """Each method's EVSI (with its follow-up, if any) for aligned beliefs."""
        return inspection.evsi(
            proba, self.process, self.inspections, follow_up=self.follow_up
        )

    @staticmethod
    def _after(proba, value):
        """``value`` of every fantasy's beliefs in one call, by fantasy and row."""
        n_fantasies, n_rows, n_states = proba.shape
        values = value(proba.reshape(n_fantasies * n_rows, n_states))
        return values.reshape(n_fantasies, n_rows, *values.shape[1:])

    def fantasise(self, model, X, X_pending) -> Fantasies | None:
        """The beliefs over ``X`` after the pending requests' results.

        The results are fantasised, as batch Bayesian optimisation does with
        pending evaluations (:class:`PendingFantasies`): each joint outcome
        of the pending requests (the most probable, at most 32, weighted by
        the model's current beliefs at their steps) is taught to a copy of
        the model by ``partial_fit``, and ``X`` is predicted again. ``None``
        when nothing is pending or the model cannot learn one label
        incrementally (no ``partial_fit``, or a state it has no class for):
        the value then ignores the pending results. A campaign keeps the
        copies between calls and fantasises a bounded set of requests.
        """
        pending = PendingFantasies(self.process)
        pending.learn(model, X_pending)
        fantasies = pending.predict(X)
        if fantasies is None:
            return None
        return Fantasies(fantasies.weights, fantasies.at(slice(None)))

    def decide(
        self,
        proba,
        times,
        budget_state,
        *,
        available=None,
        n_open: int = 0,
        first_only: bool = False,
        plan=None,
        fantasies: Fantasies | None = None,
    ) -> BlockDecisions:
        """Decide a block of consecutive steps.

        Parameters
        ----------
        proba : ndarray of shape (n_steps, n_states)
            Beliefs, columns in the process's states.
        times : ndarray of shape (n_steps,)
            Step indices or timestamps, for the budget policy.
        budget_state : dict or None
            The policy's state before the block (ignored with ``plan``).
        available : ndarray of bool, default=None
            False where an inspection is impossible (a known label).
        n_open : int, default=0
            Requests awaiting a result before the block.
        first_only : bool, default=False
            Stop at the first request (its result changes the model).
        plan : callable, default=None
            A fixed choice instead of the policy: ``plan(evpi, proba)``
            returns, per step, the method index to inspect with or -1 (random
            inspection, a user's callable query).
        fantasies : Fantasies, default=None
            The block's beliefs after the pending results
            (:meth:`fantasise`): the policy then sees the pending-aware
            values. Actions are still those of the current beliefs.

        Returns
        -------
        decisions : BlockDecisions
        """
        n = proba.shape[0]
        evpi = self.process.evpi(proba)
        if available is None:
            available = np.ones(n, dtype=bool)
        if plan is not None:
            choice = np.asarray(plan(evpi, proba))
            requested, methods, state, blocked = self._follow(choice, available, n_open)
        else:
            # Checked once here: every scan below gets arrays built by the
            # kernel and states returned by the policy itself.
            self.budget.check_state(budget_state)
            requested, methods, state, blocked = self._scan(
                proba,
                evpi,
                times,
                available,
                budget_state,
                n_open,
                first_only,
                fantasies,
            )
        if first_only and requested:
            requested, methods = requested[:1], methods[:1]
            n_decided = requested[0] + 1
        else:
            n_decided = n
        return BlockDecisions(
            n_decided=n_decided,
            evpi=evpi[:n_decided],
            # The process's optimal_action, without validating again the
            # beliefs that evpi has just checked (once per block).
            action=np.argmax(proba[:n_decided] @ self._utilities, axis=1),
            requested=np.asarray(requested, dtype=np.intp),
            methods=np.asarray(methods, dtype=np.intp),
            budget_state=state,
            n_blocked=blocked,
        )

    def _room(self, n_open: int) -> bool:
        cap = self.max_open_requests
        return cap is None or n_open < cap

    def _follow(self, plan, available, n_open):
        """The requests of a fixed plan, within the cap on open requests."""
        wanted = np.flatnonzero((plan >= 0) & available)
        cap = self.max_open_requests
        taken = wanted if cap is None else wanted[: max(cap - n_open, 0)]
        blocked = int(wanted.size - taken.size)
        return taken.tolist(), plan[taken].tolist(), None, blocked

    def _scan(
        self, proba, evpi, times, available, state, n_open, first_only, fantasies
    ):
        """The budget policy's requests: one pass over the block.

        The policy scans runs of steps whose best method is the same, with
        that method's value and cost; scanning pieces in sequence is
        scanning the whole, so the chunks change nothing but the cost.
        """
        best, value = self.method_values(proba, evpi, fantasies)
        if self.costs.shape[0] == 1:  # one method: one run
            run_end = np.array([best.shape[0]])
        else:
            run_end = np.append(np.flatnonzero(np.diff(best)) + 1, best.shape[0])
        requested, methods, blocked = [], [], 0
        start, chunk, n = 0, _FIRST_CHUNK, evpi.shape[0]
        while start < n:
            k = int(best[start])
            run_stop = int(run_end[np.searchsorted(run_end, start, side="right")])
            has_room = self._room(n_open)
            # Without room nothing can be requested before the block ends
            # (requests only open within it): the run is scanned in the
            # largest chunk at once.
            stop = min(run_stop, start + (chunk if has_room else _MAX_CHUNK))
            cost = float(self.costs[k])
            options = self._scan_options
            if self._needs_beliefs:
                options = {**options, "beliefs": proba[start:stop]}
            if not has_room:
                blocked += self._blocked(
                    value[start:stop],
                    times[start:stop],
                    available[start:stop],
                    cost,
                    state,
                    options,
                )
            room = available[start:stop] & has_room
            hit, state = self.budget.scan(
                value[start:stop], times[start:stop], room, cost, state, **options
            )
            if hit < 0:
                start = stop
                chunk = min(2 * chunk, _MAX_CHUNK)
                continue
            requested.append(start + hit)
            methods.append(k)
            if first_only:
                break
            n_open += 1
            start += hit + 1
            chunk = _FIRST_CHUNK
        return requested, methods, state, blocked

    def _blocked(self, value, times, available, cost, state, options) -> int:
        """Steps the policy would inspect but for the cap on open requests.

        The policy's state moves as it does while the cap holds (nothing is
        inspected); each step it would have inspected is counted.
        """
        if type(self.budget).scan is budgets.ScanRule.scan:
            # The protocol's scan: counted by chunks, not one scan a step.
            return self.budget.count_wanted(value, times, available, cost, state)
        count, position, n = 0, 0, value.shape[0]
        beliefs = options.get("beliefs")
        while position < n:
            if beliefs is not None:
                options = {**options, "beliefs": beliefs[position:]}
            hit, _ = self.budget.scan(
                value[position:],
                times[position:],
                available[position:],
                cost,
                state,
                **options,
            )
            if hit < 0:
                return count
            count += 1
            upto = slice(position, position + hit + 1)
            nowhere = np.zeros(hit + 1, dtype=bool)
            if beliefs is not None:
                options = {**options, "beliefs": beliefs[upto]}
            _, state = self.budget.scan(
                value[upto], times[upto], nowhere, cost, state, **options
            )
            position += hit + 1
        return count

    # -------------------------------------------------------------- #
    def read_result(
        self, k: int, belief, *, label=None, report=None, known=None
    ) -> Result:
        """What a result teaches and the action it calls for.

        Parameters
        ----------
        k : int
            The request's method index (ignored without methods).
        belief : ndarray of shape (n_states,)
            The belief when the request was made (for a report's posterior).
        label : label, default=None
            A state of the process (checked by the caller).
        report : outcome, default=None
            A report of method ``k`` (checked by the caller).
        known : ndarray of bool of shape (n_states,), default=None
            Which states have a label in the training data: a report's mass
            on a never-labelled state it counts against is not learnt
            (:func:`~skrbal.inspection.learnable_posterior`). ``None``
            learns the whole posterior.
        """
        process = self.process
        if label is not None:
            posterior = None
            if self.inspections is not None:
                posterior = (self.classes == label).astype(np.float64)
            return Result(
                label, posterior, int(self._perfect[np.asarray(label).item()])
            )
        posterior = self.report_posterior(belief, report, k)
        certain = np.flatnonzero(posterior == 1.0)
        if certain.size:
            found = self.classes[certain[0]]
            return Result(found, posterior, int(self._perfect[found.item()]), report)
        action = int(process.optimal_action(posterior[None])[0])
        follow_up = self.follow_up_of(posterior)
        if known is not None:
            outcomes = self.inspections[k].outcomes_
            column = label_positions([report], outcomes, owner="outcomes")[0]
            likelihood = self.confusions[k][:, column]
            posterior = inspection.learnable_posterior(posterior, likelihood, known)
        return Result(None, posterior, action, report, follow_up)

    def follow_up_of(self, posterior) -> int | None:
        """The method that should inspect again after ``posterior``, or None.

        With ``follow_up``: the cheapest perfect method where the posterior's
        EVPI exceeds its cost (beyond rounding), as the value of the method
        assumed when it chose it.
        """
        if self._follow_up is None:
            return None
        k, cost = self._follow_up
        value = float(self.process.evpi(posterior[None])[0]) - cost
        return k if value > self._noise else None

    def report_posterior(self, belief, report, k: int) -> np.ndarray:
        """The posterior after ``report`` of method ``k``.

        A report the belief calls impossible (a state the model has no class
        for) is trusted alone: the method's likelihood of it, normalised.
        """
        process, method = self.process, self.inspections[k]
        try:
            return inspection.report_posterior(belief[None], [report], process, method)[
                0
            ]
        except ImpossibleReportError:
            uniform = np.full((1, process.n_states), 1.0 / process.n_states)
            return inspection.report_posterior(uniform, [report], process, method)[0]

    def simulate_result(
        self, k: int, belief, true_state, random_state, known=None
    ) -> Result:
        """The result of inspecting a step whose true state is known (a study).

        Without methods the label itself; with methods a report drawn from
        method ``k``'s confusion model (one draw of ``random_state``), read
        with ``known`` (:meth:`read_result`).
        """
        if self.inspections is None:
            return self.read_result(k, belief, label=true_state)
        method = self.inspections[k]
        report = inspection.simulate_reports(
            [true_state], self.process, method, random_state
        )
        return self.read_result(k, belief, report=report[0], known=known)
