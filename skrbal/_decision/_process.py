"""The one-step maintenance decision process and its value of information.

A :class:`DecisionProcess` is the influence diagram of a single maintenance
decision: a belief over the current health state ``y_t`` (a classifier's
``predict_proba``), an action ``d_t`` with a utility of its own, a transition
model ``P(y_{t+1} | y_t, d_t)`` and a utility for the next health state. From it
follow the optimal action, the maximum expected utility and the expected value
of perfect information (EVPI) of the label ``y_t``.
"""

from __future__ import annotations

import copy
import os
from collections.abc import Mapping
from pathlib import Path

from sklearn.base import BaseEstimator

from skrbal._decision._serialisation import (
    process_from_dict,
    process_from_json,
    process_to_dict,
    process_to_json,
)
from skrbal._decision._tables import ProcessTables

__all__ = ["DecisionProcess", "as_process"]


class DecisionProcess(ProcessTables, BaseEstimator):
    """One-step maintenance decision with value of perfect information.

    The process has ``K`` health states and ``A`` actions. Taking action ``d``
    in state ``y`` earns the action utility ``U(d)`` plus the expected utility
    of the next state under the transition model::

        Q(y, d) = sum_j P(y_{t+1} = j | y_t = y, d) U(j) + U(d)

    A decision maker with belief ``p`` over ``y_t`` earns
    ``max_d sum_y p(y) Q(y, d)`` (the maximum expected utility, MEU); one who
    observes ``y_t`` first earns ``sum_y p(y) max_d Q(y, d)``. The difference
    is the expected value of perfect information (EVPI), the most an inspection
    revealing ``y_t`` is worth.

    Parameters
    ----------
    transition : array-like of shape (n_actions, n_states, n_states)
        ``transition[d, i, j] = P(y_{t+1} = j | y_t = i, d_t = d)``. Every row
        must be a probability distribution (non-negative, summing to one within
        1e-8).
    state_utility : array-like of shape (n_states,)
        Utility ``U(y_{t+1})`` of each next health state.
    action_utility : array-like of shape (n_actions,)
        Utility ``U(d_t)`` of each action (costs are negative utilities).
    inspection_cost : float, default=0.0
        Cost of one inspection that reveals the current health state. A label
        is worth querying when its EVPI exceeds this cost.
    classes : array-like of shape (n_states,), default=None
        The class label of each health state, in the order of the rows of
        ``transition``. They are matched against a classifier's ``classes_``,
        so a process for labels ``1..4`` works with a classifier trained on
        labels ``1..4``. Defaults to ``0, ..., n_states - 1``.
    state_names : sequence of str, default=None
        Human-readable names of the health states (plots, reports).
    action_names : sequence of str, default=None
        Human-readable names of the actions.

    See Also
    --------
    synthetic_decision_process : The paper's synthetic case study.
    z24_decision_process : The paper's Z24 bridge case study.

    Notes
    -----
    Every method is vectorised over beliefs of shape ``(n_samples, n_states)``
    and validates both the process and the beliefs, raising ``ValueError``
    that names the offending entry. The process's tables, including the derived
    ``Q`` and regret tables (which must not overflow), are validated once per
    set of parameter values and cached; a changed parameter (``set_params``,
    assignment or an array changed in place) is taken in at the next call.
    Ties between actions are broken towards the lowest action index.

    :meth:`to_dict` and :meth:`to_json` describe a process at full precision,
    and :meth:`from_dict` and :meth:`from_json` rebuild it, so a process can be
    kept in a file of its own.

    Examples
    --------
    >>> from skrbal import DecisionProcess
    >>> process = DecisionProcess(
    ...     transition=[[[0.9, 0.1], [0.0, 1.0]], [[1.0, 0.0], [1.0, 0.0]]],
    ...     state_utility=[10.0, -100.0],
    ...     action_utility=[0.0, -20.0],
    ...     inspection_cost=2.0,
    ... )
    >>> process.optimal_action([[1.0, 0.0], [0.0, 1.0]])
    array([0, 1])
    >>> process.evpi([[0.5, 0.5]])
    array([4.5])
    """

    # ------------------------------------------------------------------ #
    # serialisation
    # ------------------------------------------------------------------ #
    def to_dict(self) -> dict:
        """Describe the process as a JSON-serialisable dict.

        Numbers are Python floats, which JSON writes at full precision, so
        ``DecisionProcess.from_dict(process.to_dict())`` rebuilds the process
        exactly, also through :func:`json.dumps` and :func:`json.loads`.

        Returns
        -------
        description : dict
            Keys ``format_version``, ``transition`` (nested lists of shape
            ``(n_actions, n_states, n_states)``), ``state_utility``,
            ``action_utility``, ``inspection_cost``, ``classes`` (a list of
            int or str labels, or ``None`` for ``0, ..., n_states - 1``),
            ``state_names`` and ``action_names`` (lists of str, or ``None``).

        Raises
        ------
        ValueError
            If the process is invalid, or a class label is neither an integer
            nor a string (JSON could not give it back as it was).

        See Also
        --------
        from_dict : Rebuild a process from such a dict.
        to_json : Write the dict as a JSON file.

        Examples
        --------
        >>> from skrbal import DecisionProcess, synthetic_decision_process
        >>> description = synthetic_decision_process().to_dict()
        >>> description["state_utility"], description["classes"]
        ([10.0, 10.0, 5.0, -75.0], [1, 2, 3, 4])
        >>> DecisionProcess.from_dict(description).evpi([[0.5, 0, 0, 0.5]])
        array([14.75])
        """
        return process_to_dict(self)

    @classmethod
    def from_dict(cls, description: Mapping) -> DecisionProcess:
        """Build a process from a dict written by :meth:`to_dict`.

        Parameters
        ----------
        description : mapping
            Must hold ``format_version`` (currently 1) and every value a
            user must decide: ``transition``, ``state_utility``,
            ``action_utility`` and ``inspection_cost`` (no default here: a
            file that forgot its cost would inspect at every step); may hold
            ``classes``, ``state_names`` and ``action_names`` (default
            ``None``). Class labels are integers or strings.

        Returns
        -------
        process : DecisionProcess
            A validated process.

        Raises
        ------
        ValueError
            Naming the entry at fault: a missing or unknown key, an
            unsupported ``format_version``, a table of the wrong shape, a
            transition row that is not a probability distribution, a label
            that is neither an integer nor a string.

        See Also
        --------
        to_dict : The inverse.
        from_json : Read the dict from a JSON file.

        Examples
        --------
        >>> from skrbal import DecisionProcess
        >>> process = DecisionProcess.from_dict({
        ...     "format_version": 1,
        ...     "transition": [[[0.9, 0.1], [0.0, 1.0]], [[1.0, 0.0], [1.0, 0.0]]],
        ...     "state_utility": [10.0, -100.0],
        ...     "action_utility": [0.0, -20.0],
        ...     "inspection_cost": 2.0,
        ...     "classes": ["healthy", "damaged"],
        ... })
        >>> process.evpi([[0.5, 0.5]])
        array([4.5])
        """
        return process_from_dict(cls, description)

    def to_json(self, path: str | os.PathLike | None = None) -> str | None:
        """Write :meth:`to_dict` as JSON, to a file or to a string.

        Parameters
        ----------
        path : str or path-like, default=None
            File to write (UTF-8). ``None`` returns the JSON text instead.

        Returns
        -------
        text : str or None
            The JSON text when ``path`` is ``None``, else ``None``.

        See Also
        --------
        from_json : Read it back.

        Examples
        --------
        >>> from skrbal import DecisionProcess, synthetic_decision_process
        >>> text = synthetic_decision_process().to_json()
        >>> DecisionProcess.from_json(text).inspection_cost
        7.0
        """
        return process_to_json(self, path)

    @classmethod
    def from_json(cls, source: str | os.PathLike) -> DecisionProcess:
        """Read a process from JSON written by :meth:`to_json`.

        Parameters
        ----------
        source : str or path-like
            A JSON file, or JSON text itself (a string starting with ``{``).

        Returns
        -------
        process : DecisionProcess

        Raises
        ------
        ValueError
            If the file is not valid JSON or does not describe a valid
            process; the message names the file and the entry at fault.
        OSError
            If the file cannot be read.

        See Also
        --------
        from_dict : The format of the JSON object.

        Examples
        --------
        >>> from skrbal import DecisionProcess
        >>> text = '''{"format_version": 1, "transition": [[[1.0]]],
        ...            "state_utility": [1.0], "action_utility": [0.0]}'''
        >>> DecisionProcess.from_json(text).n_states
        1
        """
        return process_from_json(cls, source)


# Stores and studies name estimator classes by module (skrbal.online's JSON
# configurations); the process keeps the name it had before skrbal._decision
# became a package, so stored configurations still match.
DecisionProcess.__module__ = "skrbal._decision"


def as_process(process) -> DecisionProcess:
    """A validated copy of a process given as an object, a dict or a JSON file."""
    if isinstance(process, DecisionProcess):
        process = copy.deepcopy(process)
    elif isinstance(process, Mapping):
        process = DecisionProcess.from_dict(process)
    elif isinstance(process, str | os.PathLike):
        if not Path(process).is_file():
            raise FileNotFoundError(f"process file not found: {process}.")
        process = DecisionProcess.from_json(process)
    else:
        raise ValueError(
            "process must be a DecisionProcess, a dict as DecisionProcess.to_dict "
            "writes, or the path of a JSON file as DecisionProcess.to_json writes, "
            f"got {type(process).__name__}."
        )
    process._validated()
    return process
