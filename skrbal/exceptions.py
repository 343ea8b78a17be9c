"""Every warning and error that skrbal raises, so a user can filter or count them.

This module is the one home of skrbal's public warning and error classes; each
is also importable from the package that raises it (``skrbal.online.StoreError``
is ``skrbal.exceptions.StoreError``). It imports no optional or heavy dependency,
so any module can import it.
"""

from __future__ import annotations

import sys
from pathlib import Path

from skrbal._secrets import mask_passwords

_INTERNAL = (str(Path(__file__).resolve().parent),)

__all__ = [
    "AgentLockedError",
    "BudgetStarvedError",
    "BudgetStarvedWarning",
    "ConfigurationError",
    "FleetDrawError",
    "IdempotencyKeyError",
    "ImpossibleEvidenceError",
    "ImpossibleReportError",
    "LostClassWarning",
    "MissingStatesWarning",
    "NeedsModel",
    "NonDiscriminatingFitWarning",  # noqa: F822 (made on first use, see the end)
    "PriorScaleWarning",
    "RepeatedBatchWarning",
    "RequestError",
    "RequestExpiredWarning",
    "StalledRequestsWarning",
    "StoreError",
    "StudyFileWarning",
    "UncommissionedStatesWarning",
    "UnlabelledClassesWarning",
    "UnlabelledStateSmoothingWarning",
]


class MissingStatesWarning(UserWarning):
    """A fitted model has no class for some of the decision process's states.

    A classifier that cannot be told the full label set (``GaussianNB``,
    ``SVC``, ... have no ``classes`` parameter) learns only the labels it was
    trained on. Its beliefs then give every missing health state probability
    zero, so the expected value of perfect information treats those states as
    impossible: no inspection is ever triggered to discover them, and a
    learner may stop inspecting altogether. Give the estimator the labels
    (a ``classes`` parameter, which the learners fill in from the process), or
    include every state in the initial labelled set.

    The learners raise it once per fit and record it in their history.

    Examples
    --------
    >>> import warnings
    >>> from skrbal.exceptions import MissingStatesWarning
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always")
    ...     warnings.warn("states [2, 3] missing", MissingStatesWarning)
    >>> caught[0].category.__name__
    'MissingStatesWarning'
    """


class LostClassWarning(UserWarning):
    """A fitted classifier predicts none of a labelled class's training samples.

    Raised by :meth:`MulticlassRVC.fit <skrbal.rvm.MulticlassRVC.fit>` when a
    class that has labels is predicted for none of them: its relevance
    vectors were pruned, or their weights drained away (an mRVM2 relevance
    vector with no same-class neighbour within the kernel's reach loses its
    weight as the precision updates go on). The model then never believes in
    that class where it was seen, and a risk-based learner stops inspecting
    for it. The lost classes are in the warning's attribute ``classes`` and
    in the estimator's ``lost_classes_``; the warning is also recorded in
    ``fit_warnings_``.

    See Also
    --------
    skrbal.rvm.MulticlassRVC : The estimator that raises it.

    Examples
    --------
    >>> import warnings
    >>> from skrbal.exceptions import LostClassWarning
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always")
    ...     warnings.warn("class 3 lost", LostClassWarning)
    >>> caught[0].category.__name__
    'LostClassWarning'
    """


class UncommissionedStatesWarning(UserWarning):
    """Some states of the decision process have no commissioning example.

    An agent commissioned with healthy data only (a new structure, say) knows
    the damaged states from its model's prior alone, whatever the model: its
    beliefs about them, and so the actions it recommends, are guesses until
    an inspection finds one. :meth:`~skrbal.online.RiskBasedAgent.commission`
    warns naming those states; the warning is stored with the commission
    event, and ``skrbal agent status`` and ``report`` show the states still
    without a labelled example. The user guide's *Commissioning a new
    structure* says what to do about it.

    Examples
    --------
    >>> import warnings
    >>> from sklearn.naive_bayes import GaussianNB
    >>> from skrbal import synthetic_decision_process
    >>> from skrbal.exceptions import UncommissionedStatesWarning
    >>> from skrbal.online import RiskBasedAgent
    >>> agent = RiskBasedAgent(estimator=GaussianNB(),
    ...                        process=synthetic_decision_process())
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always")
    ...     agent = agent.fit([[-5.0], [-4.0], [-6.0], [3.0], [4.0]], [1, 1, 1, 2, 2])
    >>> [w.category.__name__ for w in caught if "commissioning" in str(w.message)]
    ['UncommissionedStatesWarning']
    >>> agent.close()
    """


class PriorScaleWarning(UserWarning):
    """The training features lie far from the scale of a default prior.

    The normal-inverse-Wishart prior of
    :class:`~skrbal.mixture.BayesianGMMClassifier` defaults to the paper's,
    prior mean 0 and identity scale, which suits standardised features. On
    raw features far from that scale (a class at feature value 19, frequencies
    in hertz, strains of order 1e-6) it pulls the class means towards 0 and
    inflates or shrinks the class covariances towards the identity until
    enough labels have been seen. Standardise the features (a Pipeline with
    :class:`~sklearn.preprocessing.StandardScaler`), or set
    ``mean_prior='data'`` and ``covariance_prior='data'``, which is the same
    model. A prior given explicitly is taken as meant and not checked (the
    paper's reproductions pin its unit prior); ``skrbal agent init --prior
    paper`` on a campaign file leaves it at the default, so it is checked.

    The classifiers raise it once per fit and record it in ``fit_warnings_``.

    Examples
    --------
    >>> import warnings
    >>> from skrbal.exceptions import PriorScaleWarning
    >>> from skrbal.mixture import BayesianGMMClassifier
    >>> X, y = [[18.0], [19.0], [-5.0], [-6.0]], [1, 1, 0, 0]
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always")
    ...     model = BayesianGMMClassifier().fit(X, y)
    >>> caught[0].category.__name__
    'PriorScaleWarning'
    >>> type(model.fit_warnings_[0]).__name__
    'PriorScaleWarning'
    """


class UnlabelledClassesWarning(UserWarning):
    """A fitted mixture has classes without a single labelled sample.

    A new structure commissioned on healthy data has no labelled example of
    its damage states. The belief in such a state is then an assumption: with
    the broad default prior its class density is the prior's Student-t, which
    takes a share of anything unlike the labelled data (frost, say), and a
    state whose failure is expensive carries most of the value of
    information there. A directed prior (``class_priors``) places the state
    where the user says it lies, mixed with the broad prior.

    :class:`~skrbal.mixture.BayesianGMMClassifier` and
    :class:`~skrbal.mixture.SemiSupervisedGMMClassifier` raise it once per
    fit, naming each such class and what the belief in it rests on (the broad
    prior alone, or the directed prior with the broad one's weight); it is
    recorded in ``fit_warnings_``, and ``unlabelled_classes_`` lists the
    classes still without a label.

    Examples
    --------
    >>> import warnings
    >>> from skrbal.exceptions import UnlabelledClassesWarning
    >>> from skrbal.mixture import BayesianGMMClassifier
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always")
    ...     model = BayesianGMMClassifier(classes=[0, 1]).fit([[0.0], [0.5]], [0, 0])
    >>> caught[0].category.__name__
    'UnlabelledClassesWarning'
    >>> model.unlabelled_classes_
    array([1])
    """


class UnlabelledStateSmoothingWarning(UserWarning):
    """Smoothing pseudo-labelled steps while some state has no labelled example.

    ``semi_supervised='smoothing'`` gives each hidden step the most probable
    state of the forward-backward marginals, whose emissions are the
    classifier's class densities. A state with no labelled example has only
    its prior density (for :class:`~skrbal.mixture.BayesianGMMClassifier`
    centred on ``mean_prior``), so the steps spent in it get the pseudo-label
    of another state whose density reaches them. And the pseudo-labels, even
    correct ones, make the model confident about the states it has: where the
    unlabelled state lies the expected value of perfect information can stay
    below the inspection cost, and no inspection ever reveals it. The paper's
    remedy then confirms the model's blind spot instead of correcting it.

    In 1000 repetitions of the synthetic case study the learner warned in 97
    runs (a state still unlabelled after the first inspection); 27 of them
    went bad (the intermediate state 3 unlabelled: final decision accuracy
    0.72 to 0.85, or more than 50 inspections, up to 317), and no run without
    the warning did. The same 27 runs without smoothing ended at a decision
    accuracy of 0.9995 or better (see the user guide, "Sampling bias").

    The stream learner raises it once per fit, the first time it smooths a
    segment while a state of the process has no labelled example. Label an
    example of every state in the initial set, or learn without pseudo-labels
    (``semi_supervised=None``) until every state has been inspected.

    Examples
    --------
    >>> import warnings
    >>> from skrbal.exceptions import UnlabelledStateSmoothingWarning
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always")
    ...     warnings.warn("state [3] has no label", UnlabelledStateSmoothingWarning)
    >>> caught[0].category.__name__
    'UnlabelledStateSmoothingWarning'
    """


class ImpossibleEvidenceError(ValueError):
    """The anchors, actions and emissions of a segment have probability zero.

    Raised when no sequence of health states is consistent with the evidence,
    for instance an end inspection that the transition model cannot reach from
    the start inspection under the actions taken (a structure found repaired
    although nothing was done, under monotone degradation). It subclasses
    ``ValueError`` so that generic input handling still catches it, while a
    caller can catch it alone to skip an inconsistent segment.

    Examples
    --------
    >>> from skrbal.smoothing import ImpossibleEvidenceError, forward_backward
    >>> degrade = [[0.5, 0.5], [0.0, 1.0]]
    >>> try:
    ...     forward_backward([[0.0, 0.0]], degrade, start=1, end=0)
    ... except ImpossibleEvidenceError as exc:
    ...     print(type(exc).__name__)
    ImpossibleEvidenceError
    """


class ImpossibleReportError(ImpossibleEvidenceError):
    """A report has probability zero under the belief it should update.

    Raised by :func:`report_posterior` when every state the belief allows has
    probability zero of producing the report, for instance a perfect
    inspection that finds a state the classifier has never seen (its
    ``predict_proba`` has no column for it). Bayes' rule has no answer then;
    the caller decides, e.g. by trusting the report alone. It subclasses
    :class:`~skrbal.smoothing.ImpossibleEvidenceError` (a ``ValueError``).

    Examples
    --------
    >>> from skrbal import synthetic_decision_process
    >>> from skrbal.inspection import (
    ...     ImpossibleReportError, perfect_inspection, report_posterior)
    >>> process = synthetic_decision_process()
    >>> try:
    ...     report_posterior([[1.0, 0.0, 0.0, 0.0]], [4], process,
    ...                      perfect_inspection(process))
    ... except ImpossibleReportError as exc:
    ...     print(exc)
    report 4 of inspection method 'perfect' has probability zero under the belief
    of row 0: ...
    """


class StudyFileWarning(UserWarning):
    """A repetition file of a resumed study is unusable and is redone.

    Raised by :func:`run_study` with ``resume=True`` for each file in
    ``repetitions/`` that does not hold the complete repetition its name
    says (unreadable, truncated, empty tables, another repetition's or
    another study's content). The message names the file and what is wrong;
    the repetition is computed again and the file replaced.

    See Also
    --------
    run_study : Runs, saves and resumes a study.
    load_study : Reads a study's folder; raises on such a file.

    Examples
    --------
    >>> import warnings
    >>> from skrbal.experiments import StudyFileWarning
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always")
    ...     warnings.warn("rep-00001.json: redone", StudyFileWarning)
    >>> issubclass(caught[0].category, UserWarning)
    True
    """


class _MaskedMessage:
    """An error whose message never holds a URL's password (``***`` instead).

    The errors of a store carry its URL; masked where the message is made,
    they cannot echo a password whoever prints them.
    """

    def __init__(self, *args):
        super().__init__(
            *(mask_passwords(a) if isinstance(a, str) else a for a in args)
        )


class ConfigurationError(_MaskedMessage, ValueError):
    """A stored configuration does not match, or cannot be rebuilt.

    Examples
    --------
    >>> from sklearn.naive_bayes import GaussianNB
    >>> from skrbal import synthetic_decision_process
    >>> from skrbal.online import AgentStore, ConfigurationError, RiskBasedAgent
    >>> store = AgentStore(":memory:")
    >>> RiskBasedAgent(estimator=GaussianNB(), store=store,
    ...                process=synthetic_decision_process()).fit(
    ...     [[-5.0], [0.0], [6.0], [19.0]], [1, 2, 3, 4]).close()
    >>> try:
    ...     RiskBasedAgent.from_store(store, estimator=GaussianNB(var_smoothing=1.0))
    ... except ConfigurationError as exc:
    ...     print(str(exc)[:60])
    estimator differs from the one stored with the agent: params
    """


class StoreError(_MaskedMessage, RuntimeError):
    """The store cannot be used: wrong version, missing agent, lost update.

    Examples
    --------
    >>> from skrbal.online import AgentStore, StoreError
    >>> store = AgentStore(":memory:")
    >>> try:
    ...     store.status("bridge")
    ... except StoreError as exc:
    ...     print(exc)
    store sqlite:// has no agent named 'bridge'; it holds [].
    >>> store.close()
    """


class RequestExpiredWarning(UserWarning):
    """Open inspection requests waited past the agent's ``request_timeout``.

    They become ``expired``: their slots of ``max_open_requests`` are free
    again, so the agent can ask for new inspections, and their results are
    still taken if they come (late results are data; the warning is issued
    again then).

    Examples
    --------
    >>> import warnings
    >>> from sklearn.naive_bayes import GaussianNB
    >>> from skrbal import synthetic_decision_process
    >>> from skrbal.exceptions import RequestExpiredWarning
    >>> from skrbal.online import RiskBasedAgent
    >>> process = synthetic_decision_process().set_params(inspection_cost=1.0)
    >>> agent = RiskBasedAgent(estimator=GaussianNB(var_smoothing=0.05),
    ...                        process=process, request_timeout=2).fit(
    ...     [[-5.0], [-0.7], [5.8], [19.0]] * 2, [1, 2, 3, 4] * 2)
    >>> agent.observe([[12.5]])["inspect"].tolist()
    [True]
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always")
    ...     for x in [[-5.0]], [[-4.9]]:
    ...         _ = agent.observe(x)
    >>> [w.category.__name__ for w in caught]
    ['RequestExpiredWarning']
    >>> agent.status()["n_expired"]
    1
    >>> agent.close()
    """


class RepeatedBatchWarning(UserWarning):
    """An ``observe`` call repeats the agent's last observations exactly.

    An agent without times counts its clock in steps, so a batch given twice
    (a file observed again by a retried cron job) looks like new rows. The
    agent warns when a call's rows equal, bit for bit, its last as many
    observations, naming the steps; the rows are still decided, as new
    steps. A retry with the call's ``key`` is no repeat: it returns the
    stored decisions without deciding again.

    Examples
    --------
    >>> import warnings
    >>> from sklearn.naive_bayes import GaussianNB
    >>> from skrbal import synthetic_decision_process
    >>> from skrbal.exceptions import RepeatedBatchWarning
    >>> from skrbal.online import RiskBasedAgent
    >>> agent = RiskBasedAgent(estimator=GaussianNB(),
    ...                        process=synthetic_decision_process()).fit(
    ...     [[-5.0], [0.0], [6.0], [19.0]], [1, 2, 3, 4])
    >>> _ = agent.observe([[12.5], [-5.0]])
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always")
    ...     _ = agent.observe([[12.5], [-5.0]])
    >>> [w.category.__name__ for w in caught], agent.n_steps_
    (['RepeatedBatchWarning'], 8)
    >>> agent.close()
    """


class StalledRequestsWarning(UserWarning):
    """The budget wanted inspections while every allowed request was open.

    With ``max_open_requests``, results that do not come back stop the agent
    from asking for more. The agent warns when a stall begins, naming the
    oldest open requests, and again each time the count of inspections it
    blocked has more than doubled (at 3, 7, 15, ...), so that a long stall
    is not reported once and forgotten; a result, a cancellation or an
    expiry (``request_timeout``) ends the stall.

    Examples
    --------
    >>> import warnings
    >>> from sklearn.naive_bayes import GaussianNB
    >>> from skrbal import synthetic_decision_process
    >>> from skrbal.exceptions import StalledRequestsWarning
    >>> from skrbal.online import RiskBasedAgent
    >>> process = synthetic_decision_process().set_params(inspection_cost=1.0)
    >>> agent = RiskBasedAgent(estimator=GaussianNB(var_smoothing=0.05),
    ...                        process=process, max_open_requests=1,
    ...                        pending_value="ignore").fit(
    ...     [[-5.0], [-0.7], [5.8], [19.0]] * 2, [1, 2, 3, 4] * 2)
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always")
    ...     decisions = agent.observe([[12.5], [12.6]])
    >>> decisions["inspect"].tolist(), [w.category.__name__ for w in caught]
    ([True, False], ['StalledRequestsWarning'])
    >>> agent.close()
    """


class AgentLockedError(_MaskedMessage, RuntimeError):
    """The agent is open for writing elsewhere (another process or object).

    Examples
    --------
    >>> from sklearn.naive_bayes import GaussianNB
    >>> from skrbal import synthetic_decision_process
    >>> from skrbal.online import AgentLockedError, AgentStore, RiskBasedAgent
    >>> store = AgentStore(":memory:")
    >>> agent = RiskBasedAgent(estimator=GaussianNB(), store=store,
    ...                        process=synthetic_decision_process())
    >>> agent = agent.fit([[-5.0], [0.0], [6.0], [19.0]], [1, 2, 3, 4])
    >>> try:
    ...     RiskBasedAgent.from_store(store, "agent")
    ... except AgentLockedError:
    ...     print("locked")
    locked
    >>> agent.close()
    >>> RiskBasedAgent.from_store(store, "agent").close()
    """


class RequestError(_MaskedMessage, ValueError):
    """An inspection result or cancellation the agent cannot accept.

    Raised for an unknown request, a cancelled one, a repeated result or a
    label outside the process; the agent and its store are left unchanged.

    Examples
    --------
    >>> from sklearn.naive_bayes import GaussianNB
    >>> from skrbal import synthetic_decision_process
    >>> from skrbal.online import RequestError, RiskBasedAgent
    >>> agent = RiskBasedAgent(estimator=GaussianNB(),
    ...                        process=synthetic_decision_process())
    >>> agent = agent.fit([[-5.0], [0.0], [6.0], [19.0]], [1, 2, 3, 4])
    >>> try:
    ...     agent.record_inspection(1, 2)
    ... except RequestError as exc:
    ...     print(str(exc)[:36])
    request_id 1 is not a request of age
    >>> agent.close()
    """


def missing_states(model_classes, process_classes):
    """The process's states that ``model_classes`` lacks, in the process's order."""
    import numpy as np  # here: a store's reader needs no numpy for errors

    if model_classes is None:
        return np.asarray(process_classes)[:0]
    process_classes = np.asarray(process_classes)
    present = set(np.asarray(model_classes).tolist())
    return process_classes[[s not in present for s in process_classes.tolist()]]


def missing_states_message(owner: str, missing, process_classes) -> str:
    """The text of a :class:`MissingStatesWarning` about ``owner``."""
    import numpy as np

    missing = np.asarray(missing).tolist()
    states = np.asarray(process_classes).tolist()
    return (
        f"{owner} has no class for the process's state(s) {missing} (the "
        f"process has {states}): it gives "
        "them probability 0, so EVPI treats them as impossible and no inspection "
        "will look for them. Give the estimator the labels (a classes parameter) "
        "or label every state in the initial set."
    )


def caller_stacklevel() -> int:
    """The ``stacklevel`` of the first frame outside skrbal and scikit-learn.

    A warning raised deep in a fit (through sklearn's ``_fit_context``, a
    learner, a Pipeline) then points at the user's line. Without
    scikit-learn imported (a command deciding from the model's snapshot),
    none of its frames can be on the stack, and it is not imported.
    """
    sklearn = sys.modules.get("sklearn")
    internal = _INTERNAL
    if sklearn is not None:
        internal = (*_INTERNAL, str(Path(sklearn.__file__).resolve().parent))
    frame, level = sys._getframe(1), 1
    while frame is not None and frame.f_code.co_filename.startswith(internal):
        frame, level = frame.f_back, level + 1
    return level


class FleetDrawError(RuntimeError):
    """A fleet budget asked to decide outside a draw of its fleet.

    Examples
    --------
    >>> from skrbal.fleet import FleetDrawError
    >>> issubclass(FleetDrawError, RuntimeError)
    True
    """


class BudgetStarvedError(ValueError):
    """A budget's money per period is below the cost of one inspection.

    ``SpendCap(limit=4.8, ...)`` with an inspection cost of 7 can never
    inspect: every decision it makes is "do not inspect", which looks like a
    model that has nothing to ask. The budget policies refuse it when they
    first see the cost, naming the limit and the cost. Raise the limit,
    lengthen the period, let unspent money carry over
    (:class:`~skrbal.budget.PacedBudget` with ``carry_over=True``), or pass
    ``allow_starved=True`` to accept a budget that inspects nothing (then a
    :class:`BudgetStarvedWarning` says so once).

    Examples
    --------
    >>> import numpy as np
    >>> from skrbal.budget import SpendCap
    >>> from skrbal.exceptions import BudgetStarvedError
    >>> cap = SpendCap(limit=4.8, period=10.0)
    >>> try:
    ...     cap.scan([9.0], [0.0], np.array([True]), 7.0, cap.initial_state())
    ... except BudgetStarvedError as error:
    ...     print(type(error).__name__)
    BudgetStarvedError
    """


class BudgetStarvedWarning(UserWarning):
    """A budget allowed to starve (``allow_starved=True``) cannot inspect.

    Raised once per policy object, the first time a scan sees a cost above
    the money of a period, so that a budget that inspects nothing is never
    silent.

    Examples
    --------
    >>> import warnings
    >>> import numpy as np
    >>> from skrbal.budget import SpendCap
    >>> cap = SpendCap(limit=4.8, period=10.0, allow_starved=True)
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always")
    ...     step, _ = cap.scan([9.0], [0.0], np.array([True]), 7.0,
    ...                        cap.initial_state())
    >>> step, caught[0].category.__name__
    (-1, 'BudgetStarvedWarning')
    """


def _non_discriminating_fit_warning():
    from sklearn.exceptions import ConvergenceWarning

    class NonDiscriminatingFitWarning(ConvergenceWarning):
        """Warning of a fit whose beliefs cannot discriminate its training classes.

        Raised by :meth:`MulticlassRVC.fit <skrbal.rvm.MulticlassRVC.fit>` when, on the
        training data, the fitted model's predictions are no better than always
        predicting the most frequent class, or its log loss is within 5 % of the entropy
        of the class frequencies (the beliefs carry next to no information beyond the
        class shares: typically nearly uniform probabilities). Decisions based on such
        beliefs ignore the features. It is also recorded in the estimator's
        ``fit_warnings_``.

        Its message does not depend on the fit's numbers, so that a run of
        refits shows it once under Python's default warning filter; they are in
        its attribute ``diagnostics``, a dict with ``training_accuracy``,
        ``majority_share``, ``log_loss``, ``class_entropy`` (the log loss of the
        class frequencies) and ``n_relevance``.

        See Also
        --------
        skrbal.rvm.MulticlassRVC : The estimator that raises it.

        Examples
        --------
        >>> import warnings
        >>> import numpy as np
        >>> from skrbal.rvm import MulticlassRVC, NonDiscriminatingFitWarning
        >>> X = np.repeat([[0.0], [1.0]], 4, axis=0)
        >>> y = np.tile([0, 1], 4)  # labels unrelated to X
        >>> with warnings.catch_warnings(record=True) as caught:
        ...     warnings.simplefilter("always")
        ...     model = MulticlassRVC().fit(X, y)
        >>> [w.category.__name__ for w in caught]
        ['NonDiscriminatingFitWarning']
        >>> model.discriminates_
        False
        >>> model.fit_warnings_[0].diagnostics["training_accuracy"]
        0.5
        """

    NonDiscriminatingFitWarning.__qualname__ = "NonDiscriminatingFitWarning"
    return NonDiscriminatingFitWarning


def __getattr__(name: str):
    # It subclasses scikit-learn's ConvergenceWarning, and importing sklearn
    # takes about a second: the class is made on first use, once (setdefault
    # keeps the first one if two threads race), so that importing this module
    # stays cheap for the command line.
    if name == "NonDiscriminatingFitWarning":
        return globals().setdefault(name, _non_discriminating_fit_warning())
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


class NeedsModel(Exception):
    """The call changes what the snapshot holds: only the model can decide it.

    Raised by :meth:`SnapshotAgent.observe` before anything is written: a
    request opened while fewer than 32 are fantasised, or an expiry among
    them, changes the fantasised requests, whose copies must learn from the
    model. Observe the same rows with :class:`RiskBasedAgent`.

    Examples
    --------
    >>> from skrbal.online import NeedsModel
    >>> issubclass(NeedsModel, Exception)
    True
    """


class IdempotencyKeyError(RequestError):
    """A client key reused for a different call, or a key that is not valid.

    A call made with a client key (``RiskBasedAgent.observe(X, key=...)``,
    ``record_inspection``, ``record_label``, ``cancel_request``,
    ``record_action``) is stored with the key; the same call retried with
    the same key returns the stored answer. The same key with other inputs
    (other rows, times, label or report, or another call) is the caller's
    mistake, not damage to the store: it is a :class:`RequestError` (a
    ``ValueError``; the command line exits 2), raised before anything is
    decided or written, naming the agent, the key and what differs. A key
    must be a non-empty string of at most 200 characters without NUL.

    Examples
    --------
    >>> from sklearn.naive_bayes import GaussianNB
    >>> from skrbal import synthetic_decision_process
    >>> from skrbal.exceptions import IdempotencyKeyError
    >>> from skrbal.online import RiskBasedAgent
    >>> agent = RiskBasedAgent(estimator=GaussianNB(),
    ...                        process=synthetic_decision_process())
    >>> agent = agent.fit([[-5.0], [0.0], [6.0], [19.0]], [1, 2, 3, 4])
    >>> _ = agent.observe([[1.0]], key="batch-1")
    >>> try:
    ...     agent.observe([[2.0]], key="batch-1")
    ... except IdempotencyKeyError as exc:
    ...     print(str(exc)[:52])
    agent 'agent': client key 'batch-1' was used by obse
    >>> agent.close()
    """
