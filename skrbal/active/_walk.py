"""One walk of a recorded stream by :class:`~skrbal.active.RiskBasedLearner`.

The learner holds the configuration; a :class:`StreamWalk` holds what changes
while the stream is walked (the model, the labelled set, the requests whose
results are on their way, the budget's state) and what the walk records (the
per-step and per-inspection histories). Deciding is the shared kernel's
(:class:`skrbal._learning.DecisionKernel`), so the walk makes the decisions
of the live agent fed the same stream.
"""

from __future__ import annotations

import math
import warnings
from collections import deque

import numpy as np
import pandas as pd
from sklearn.utils import Bunch

from skrbal._labels import label_positions
from skrbal._learning import CampaignParams, RecordedSteps, take_rows
from skrbal._scores import HeldOutScores
from skrbal.exceptions import (
    MissingStatesWarning,
    caller_stacklevel,
    missing_states,
    missing_states_message,
)
from skrbal.metrics import campaign_summary, class_proportions

# Steps per chunk when the totals are summed without a per-step history.
_TOTALS_CHUNK = 65536


class StreamWalk:
    """The running state and the records of one walk of the stream.

    Parameters
    ----------
    learner : RiskBasedLearner
        The configuration (validated by the learner).
    X, y, initial, X_test, y_test, actions
        As checked by :meth:`RiskBasedLearner.fit`.
    rng : RandomState
        Draws the random plan (already drawn) and the reports.
    plan : tuple
        The learner's strategy and budget policy in use, and the plan of
        ``strategy='random'`` (a method index per step, or -1; None for
        another strategy).
    routine : ndarray of int or None
        Steps whose labels come from routine inspections, increasing.
    """

    def __init__(
        self, learner, X, y, initial, X_test, y_test, actions, rng, plan, routine
    ):
        process = learner.process
        self.learner, self.process = learner, process
        self.X, self.X_test, self.y_test = X, X_test, y_test
        self.scores = None  # HeldOutScores, at the first evaluation
        self.strategy, budget, self.planned = plan
        self.rng = rng
        self.full = learner.history == "full"
        # The process's states, validated once for the whole walk.
        self.classes = classes = process.classes_
        # Each step's state as a position in the process's states (naming any
        # unknown label), in the smallest integer type that holds them.
        index = label_positions(y, classes, owner="the process's classes")
        self.label_index = index.astype(np.min_scalar_type(len(classes) - 1))
        self.proportion_keys = [f"proportion_{c}" for c in classes]
        self._seen_coverage = (None, None)
        self.initial = initial
        self.y = y  # the oracle: read where inspected, and to score
        n_steps = X.shape[0]
        # The policy whose state the history keeps (None: the default).
        self.budget = budget
        params = CampaignParams.of(learner, process=process, budget=self.budget)
        self.campaign = campaign = params.campaign(
            follow_up=learner.follow_up, history_filter=learner.history_filter
        )
        self.kernel = campaign.kernel
        action_type = (
            np.intp if self.full else np.min_scalar_type(process.n_actions - 1)
        )
        steps = RecordedSteps(X, y, initial, actions, action_type)
        self.state = steps.state
        campaign.fit(learner.estimator, steps)
        self.warned = []
        # Running count of the labelled set's states, for the query records.
        self.counts = np.bincount(self.label_index[initial], minlength=len(classes))
        if learner.inspections is not None:
            self.counts = self.counts.astype(np.float64)
        # The inspection method of each inspected step, for the full history.
        self.method_used = np.full(n_steps, -1, dtype=np.intp) if self.full else None
        self.evpi = np.empty(n_steps) if self.full else None
        self.inspected = np.zeros(n_steps, dtype=bool)
        # The follow-up method of each step inspected again (follow_up=True).
        self.follow_ups: dict[int, int] = {}
        # The perfect-information action of a known step, by its state.
        self.perfect_of_state = self.kernel.perfect_actions
        self.queries = []
        self.queries.append(self.query_record(-1))
        if self.budget is not None:
            self.queries[0]["budget_state"] = campaign.budget_state
        # Requests on their way: (step before which the result arrives, id).
        self.due = deque()
        # Routine labels, each learnt once its step is decided.
        self.routine = None if routine is None else deque(routine.tolist())
        if self.routine is not None:
            self.queries[0]["routine"] = False
        self.n_routine = self.n_expired = 0

    @property
    def model(self):
        """The campaign's current model."""
        return self.campaign.model

    @property
    def update(self):
        """The campaign's update rule."""
        return self.campaign.rule

    # -------------------------------------------------------------- #
    def run(self) -> StreamWalk:
        """Walk the stream: decide, request, learn each result when it arrives."""
        n_steps, block_size = self.X.shape[0], self.learner.block_size
        start, block = 0, block_size
        routine, campaign = self.routine, self.campaign
        while start < n_steps:
            # Routine labels of the steps decided, then the results due by
            # this step, are learnt before it is decided; then the requests
            # past their timeout expire.
            while routine and routine[0] < start:
                self.learn_routine(routine.popleft())
            while self.due and self.due[0][0] <= start:
                self.learn_result(self.due.popleft()[1])
            overdue = campaign.overdue(float(start))
            if overdue:
                campaign.expire(overdue)
                self.n_expired += len(overdue)
            stop = min(n_steps, start + block)
            if self.due:
                stop = min(stop, self.due[0][0])
            if routine:
                stop = min(stop, routine[0] + 1)
            expiry = campaign.next_expiry()
            if expiry is not None:
                stop = min(stop, max(start + 1, math.ceil(expiry)))
            if self.decide_block(start, stop):
                block = block_size
            else:
                block = min(2 * block, 64 * block_size)
            start = self.decided_until
        # Routine labels and results still on their way when the stream ends
        # are learnt last.
        while routine:
            self.learn_routine(routine.popleft())
        while self.due:
            self.learn_result(self.due.popleft()[1])
        return self

    def decide_block(self, start: int, stop: int) -> bool:
        """Decide steps ``start..`` up to the block's first request, if any.

        Sets ``decided_until``; returns whether a request was made.
        """
        campaign, state = self.campaign, self.state
        rows = take_rows(self.X, slice(start, stop))
        proba = campaign.beliefs(rows, step=start, first=start, rows="X (stream)")
        # A block ends at its first request: the model does not change until
        # that request's result arrives, so this only splits the work, and
        # keeps one request (and its method) per block.
        times = np.arange(start, stop, dtype=float)
        decided = campaign.decide(
            rows,
            proba,
            times,
            available=~state.known[start:stop],
            first_only=True,
            plan=self.learner._plan(self.strategy, self.planned, start, stop),
        )
        end = self.decided_until = start + decided.n_decided
        if self.full:
            self.evpi[start:end] = decided.evpi
        # The agent acts on the true state wherever it knows it (the initially
        # known steps); an inspected step's action is set when its result
        # arrives.
        chosen = decided.action
        now_known = state.known[start:end]
        chosen[now_known] = self.perfect_of_state[
            self.label_index[start:end][now_known]
        ]
        state.action[start:end] = chosen
        if not decided.requested.size:
            return False
        step, method = end - 1, int(decided.methods[0])
        self.inspected[step] = True
        if self.full:
            self.method_used[step] = method
        (request_id,) = campaign.open_requests(start, decided, proba, times)
        self.due.append((step + 1 + self.learner.result_delay, int(request_id)))
        return True

    def learn_result(self, request_id: int) -> None:
        """Read a request's result from the oracle and teach it to the model."""
        campaign = self.campaign
        step = campaign.requests[request_id].step
        result = campaign.simulate_result(request_id, self.y[step], self.rng)
        method = campaign.requests[request_id].method
        columns = self.report_columns(method, result)
        if result.follow_up is not None:
            # The report warrants a perfect inspection of the same step: its
            # label is learnt (and recorded) instead of the report.
            k = result.follow_up
            followed = self.kernel.simulate_result(
                k, result.posterior, self.y[step], self.rng
            )
            campaign.answer_with_follow_up(request_id, result, followed)
            self.follow_ups[step] = k
            columns.update(
                {f"posterior_{c}": p for c, p in zip(self.classes, followed.posterior)}
            )
            columns["follow_up"] = self.learner.inspections[k].name
            result = followed
        else:
            campaign.answer(request_id, result)
        if result.label is not None:
            self.counts[self.label_index[step]] += 1
        else:
            self.counts += result.posterior
        record = self.query_record(step, columns)
        if self.routine is not None:
            record["routine"] = False
        self.queries.append(record)
        if self.budget is not None:
            self.queries[-1]["budget_state"] = campaign.budget_state

    def learn_routine(self, step: int) -> None:
        """Learn a routine label, unless the step was inspected or known."""
        if self.state.known[step] or self.inspected[step]:
            return
        campaign = self.campaign
        # A routine inspection is the process's perfect one.
        result = campaign.read_result(None, None, label=self.y[step])
        k = 0 if self.learner.inspections is None else None
        campaign.learn_routine(step, result, k)
        self.counts[self.label_index[step]] += 1
        self.n_routine += 1
        record = self.query_record(step)
        record["routine"] = True
        if self.learner.inspections is not None:
            record["method"] = None
        self.queries.append(record)
        if self.budget is not None:
            record["budget_state"] = campaign.budget_state

    # -------------------------------------------------------------- #
    def report_columns(self, k, result):
        """The query record's columns of method ``k``'s report (None without)."""
        if self.learner.inspections is None:
            return None
        method = self.learner.inspections[k]
        columns = {"method": method.name, "report": result.report}
        columns.update(
            {f"posterior_{c}": p for c, p in zip(self.classes, result.posterior)}
        )
        return columns

    def evaluate(self):
        """Decision accuracy and macro-F1 of the current model on the test set."""
        if self.scores is None:
            self.scores = HeldOutScores(self.y_test, self.process)
        model = self.model
        accuracy, f1 = self.scores(model.predict_proba(self.X_test), model.classes_)
        return {"decision_accuracy": accuracy, "f1_macro": f1}

    def check_coverage(self, step: int) -> int:
        """Number of process states the model lacks; warn the first time."""
        model = self.model
        classes = getattr(model, "classes_", None)
        seen, n_missing = self._seen_coverage
        if classes is seen and classes is not None:
            return n_missing  # the same classes_ array: the same answer
        missing = missing_states(classes, self.classes)
        self._seen_coverage = (classes, int(missing.size))
        if missing.size and not self.warned:
            where = "initial model" if step < 0 else f"model after step {step}"
            message = missing_states_message(
                f"The {where} ({type(model).__name__})", missing, self.classes
            )
            if self.classes.size - missing.size < 2:
                # One state known: every belief is certain, the EVPI 0. A
                # study records this repetition (its warnings are counted);
                # a live agent refuses such a model at commissioning.
                message += (
                    " It knows a single state, so every belief is certain, the "
                    "EVPI is 0 at every step and no inspection will be made."
                )
            warnings.warn(message, MissingStatesWarning, stacklevel=caller_stacklevel())
            self.warned.append(message)
        return int(missing.size)

    def query_record(self, step: int, report=None) -> dict:
        """One row of ``history_.queries`` after learning ``step`` (-1: initial).

        ``report``: the method, report and posterior columns of an inspection
        with ``inspections``; the counts are fractional then (posteriors).
        """
        classes, counts, state = self.classes, self.counts, self.state
        n_missing = self.check_coverage(step)
        n_labelled = round(float(counts.sum()))
        record = {
            "query": len(self.queries),
            "step": step,
            "label": self.y[step] if step >= 0 else None,
            **(report or {}),
            "n_labelled": n_labelled,
            "n_missing_states": n_missing,
        }
        record.update(zip(self.proportion_keys, (counts / n_labelled).tolist()))
        effective = self.update.effective_labels(self.model, state)
        if effective is not None:
            proportions = class_proportions(effective, classes)
            record.update(
                {f"effective_proportion_{c}": p for c, p in zip(classes, proportions)}
            )
        if self.X_test is not None:
            record.update(self.evaluate())
        return record

    # -------------------------------------------------------------- #
    def history(self) -> Bunch:
        """The learner's ``history_``: steps, queries, totals, warnings."""
        if self.full:
            history = self._full_history()
        else:
            history = Bunch(steps=None, queries=None, totals=self._chunked_totals())
        history.queries = pd.DataFrame(self.queries)
        # The update rule's own warnings (smoothing with an unlabelled state).
        self.warned.extend(getattr(self.update, "warnings", ()))
        history.warnings = self.warned
        history.totals["n_warnings"] = len(self.warned)
        if self.budget is not None:
            history.budget_state = self.campaign.budget_state
        if self.learner.max_open_requests is not None:
            history.totals["n_blocked"] = self.campaign.n_blocked
        if self.learner.request_timeout is not None:
            history.totals["n_expired"] = self.n_expired
        if self.routine is not None:
            history.totals["n_routine"] = self.n_routine
        return history

    def _chunked_totals(self):
        """The totals of :func:`campaign_summary`, a chunk of steps at a time.

        For ``history='queries'``: the per-step temporaries then stay a chunk
        long; the sums are added up and the decision accuracy weighted by
        each chunk's decisions.
        """
        y, action, inspected = self.y, self.state.action, self.inspected
        parts = [
            campaign_summary(
                y[start : start + _TOTALS_CHUNK],
                action[start : start + _TOTALS_CHUNK],
                self.process,
                inspected=inspected[start : start + _TOTALS_CHUNK],
            )
            for start in range(0, len(y), _TOTALS_CHUNK)
        ]
        totals = {key: sum(part[key] for part in parts) for key in parts[0]}
        totals["decision_accuracy"] = (
            sum(part["decision_accuracy"] * part["n_decisions"] for part in parts)
            / totals["n_decisions"]
        )
        return totals

    def _full_history(self) -> Bunch:
        y, action, process = self.y, self.state.action, self.process
        known_before = np.zeros(y.shape[0], dtype=bool)
        known_before[self.initial] = True
        steps = pd.DataFrame(
            {
                "evpi": self.evpi,
                "inspected": self.inspected,
                "known": known_before,
                "action": action,
                "perfect_action": self.perfect_of_state[self.label_index],
                "utility": process.realised_utility(y, action),
            }
        )
        methods = self.learner.inspections
        if methods is None:
            summary = campaign_summary(y, action, process, inspected=self.inspected)
        else:
            names = np.array([m.name for m in methods] + [None], dtype=object)
            steps["method"] = names[self.method_used]
            summary = campaign_summary(
                y, action, process, inspected=self.method_used, methods=methods
            )
            if self.learner.follow_up:
                self._add_follow_ups(steps, summary, methods)
        return Bunch(steps=steps, queries=None, totals=dict(summary))

    def _add_follow_ups(self, steps, summary, methods) -> None:
        """Count each follow-up inspection in the per-step history and totals."""
        follow_up = np.full(len(steps), None, dtype=object)
        for step, k in self.follow_ups.items():
            name, cost = methods[k].name, methods[k].cost_
            follow_up[step] = name
            summary.n_inspections += 1
            summary.inspection_spend += cost
            summary.net_utility -= cost
            summary.n_inspections_by_method[name] += 1
            summary.spend_by_method[name] += cost
        steps["follow_up"] = follow_up
        summary.n_follow_ups = len(self.follow_ups)
