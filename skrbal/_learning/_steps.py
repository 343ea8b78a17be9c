"""The steps a campaign's update rule reads: a recorded stream, or a live one.

The update rules of :mod:`skrbal._learning` read a
:class:`~skrbal._learning.StreamState` whose arrays are indexed by stream
step. The stream learner has every step of its record at hand
(:class:`RecordedSteps`). An agent's stream grows without end, so it keeps
buffers and hands the rules a ``StreamState`` over the steps seen so far:

- :class:`DenseSteps` keeps every step (features, labels, known flags,
  actions): EM refits over everything seen and smoothing reads the segments
  between known labels, so their memory grows with the stream by nature;
- :class:`SparseSteps` keeps only the labelled steps and those with an open
  request: the supervised rule reads nothing else, so the agent's memory
  grows with its inspections, not with its observations.
"""

from __future__ import annotations

import numpy as np

from skrbal._learning._updates import StreamState, take_rows


class GrowableArray:
    """An array whose first axis grows by amortised doubling."""

    def __init__(self, shape_tail=(), dtype=float, fill=0):
        self._data = np.full((64, *shape_tail), fill, dtype=dtype)
        self._fill = fill
        self.size = 0

    def extend(self, values) -> None:
        values = np.asarray(values, dtype=self._data.dtype)
        need = self.size + values.shape[0]
        if need > self._data.shape[0]:
            capacity = max(need, 2 * self._data.shape[0])
            grown = np.full(
                (capacity, *self._data.shape[1:]), self._fill, dtype=self._data.dtype
            )
            grown[: self.size] = self._data[: self.size]
            self._data = grown
        self._data[self.size : need] = values
        self.size = need

    @property
    def view(self) -> np.ndarray:
        """The filled part (a view: writes go to the buffer)."""
        return self._data[: self.size]


class DenseSteps:
    """Features, labels, known flags and actions of every step so far."""

    def __init__(self, n_features: int, classes: np.ndarray):
        self.n_features = n_features
        self._X = GrowableArray((n_features,), dtype=np.float64)
        self._y = GrowableArray(dtype=classes.dtype, fill=classes[0])
        self._known = GrowableArray(dtype=bool, fill=False)
        self._action = GrowableArray(dtype=np.intp)
        self._user_action = GrowableArray(dtype=bool, fill=False)
        self.labelled: list = []
        # Steps known through an imperfect report: step -> posterior.
        self.soft: dict = {}
        # Actions the owner recorded as taken: step -> action.
        self.told: dict = {}

    @property
    def n_steps(self) -> int:
        return self._X.size

    def extend(self, X, action, y=None, keep=()) -> None:
        """Append steps (``keep``: positions to retain; all are, here)."""
        n = X.shape[0]
        self._X.extend(X)
        self._action.extend(action)
        self._user_action.extend(np.zeros(n, dtype=bool))
        if y is None:
            self._y.extend(np.full(n, self._y._fill))
            self._known.extend(np.zeros(n, dtype=bool))
        else:
            first = self._known.size
            self._y.extend(y)
            self._known.extend(np.ones(n, dtype=bool))
            self.labelled.extend(range(first, first + n))

    def learn_label(self, step: int, label, action: int):
        """Mark ``step`` labelled; return what :meth:`restore` needs."""
        saved = (
            self._y.view[step],
            self._action.view[step],
            len(self.labelled),
        )
        self._y.view[step] = label
        self._known.view[step] = True
        # The action taken at an inspected step is the one for its state,
        # unless the user recorded another.
        if not self._user_action.view[step]:
            self._action.view[step] = action
        self.labelled.append(step)
        return saved

    def restore(self, step: int, saved) -> None:
        """Undo :meth:`learn_label`."""
        self._y.view[step], self._action.view[step], n_labelled = saved
        self._known.view[step] = False
        del self.labelled[n_labelled:]

    def learn_report(self, step: int, action: int):
        """Set the action of a reported step; return what :meth:`unreport` needs.

        The update rule itself records the posterior in :attr:`soft`.
        """
        saved = self._action.view[step]
        if not self._user_action.view[step]:
            self._action.view[step] = action
        return saved

    def unreport(self, step: int, saved) -> None:
        """Undo :meth:`learn_report` and the rule's entry in :attr:`soft`."""
        self._action.view[step] = saved
        self.soft.pop(step, None)

    def record_action(self, step: int, action: int) -> None:
        self._action.view[step] = action
        self._user_action.view[step] = True
        self.told[step] = action

    def release(self, step: int) -> None:
        """A request was cancelled: its step keeps its row (others read it)."""

    def rows(self, steps):
        """The features of ``steps``."""
        return self._X.view[np.asarray(steps)]

    def stream_state(self) -> StreamState:
        """The update rules' view of the steps so far."""
        return StreamState(
            X=self._X.view,
            y=self._y.view,
            known=self._known.view,
            labelled=self.labelled,
            action=self._action.view,
            exogenous_actions=None,
            soft=self.soft,
            told=self.told,
        )


class _Rows:
    """Rows of a few steps, indexed by step like the full array would be."""

    def __init__(self, rows: dict, n_steps: int, tail: tuple, dtype):
        self._rows = rows
        self.shape = (n_steps, *tail)
        self.dtype = dtype

    def __getitem__(self, steps):
        if isinstance(steps, tuple) and steps[1:] == (Ellipsis,):
            steps = steps[0]  # sklearn's _safe_indexing reads array[key, ...]
        steps = np.asarray(steps)
        if steps.ndim != 1:
            raise IndexError("only a list of steps can be read from sparse rows")
        out = np.empty((steps.size, *self.shape[1:]), dtype=self.dtype)
        for i, step in enumerate(steps.tolist()):
            out[i] = self._rows[step]
        return out


class SparseSteps:
    """Only the rows of labelled steps and of steps awaiting a result."""

    def __init__(self, n_features: int, classes: np.ndarray):
        self.n_features = n_features
        self._dtype = classes.dtype
        self._X: dict = {}
        self._y: dict = {}
        self.labelled: list = []
        self.soft: dict = {}
        self.told: dict = {}
        self.n_steps = 0

    def extend(self, X, action, y=None, keep=()) -> None:
        """Append steps, retaining the rows at positions ``keep`` (all with y)."""
        first = self.n_steps
        positions = range(X.shape[0]) if y is not None else keep
        for i in positions:
            self._X[first + i] = np.array(X[i], dtype=np.float64)
        if y is not None:
            for i, label in enumerate(y):
                self._y[first + i] = label
            self.labelled.extend(range(first, first + X.shape[0]))
        self.n_steps += X.shape[0]

    def put(self, step: int, row) -> None:
        """Retain the row of an earlier step (when resuming)."""
        self._X[step] = np.array(row, dtype=np.float64)

    def learn_label(self, step: int, label, action: int):
        self._y[step] = label
        self.labelled.append(step)
        return len(self.labelled) - 1

    def restore(self, step: int, saved) -> None:
        del self._y[step]
        del self.labelled[saved:]

    def learn_report(self, step: int, action: int):
        """The supervised rule does not read actions."""

    def unreport(self, step: int, saved) -> None:
        self.soft.pop(step, None)

    def record_action(self, step: int, action: int) -> None:
        """Keep an action the owner took (a repair moves the class weights)."""
        self.told[step] = action

    def release(self, step: int) -> None:
        """A request was cancelled: its row is no longer needed."""
        if step not in self._y:
            self._X.pop(step, None)

    def rows(self, steps):
        """The features of ``steps`` (each one held: labelled or requested)."""
        return _Rows(self._X, self.n_steps, (self.n_features,), np.float64)[steps]

    def stream_state(self) -> StreamState:
        return StreamState(
            X=_Rows(self._X, self.n_steps, (self.n_features,), np.float64),
            y=_Rows(self._y, self.n_steps, (), self._dtype),
            known=None,
            labelled=self.labelled,
            action=None,
            exogenous_actions=None,
            soft=self.soft,
            told=self.told,
        )

    @property
    def n_rows(self) -> int:
        """Rows held in memory."""
        return len(self._X)


class RecordedSteps:
    """Every step of a recorded stream, at hand from the start (the learner's).

    The stream learner walks a record whose features are all known; the
    update rules read them, the labels learnt so far and the actions taken,
    as they read an agent's :class:`DenseSteps`. The labels learnt are kept
    apart from the record's labels (the oracle the walk scores against): a
    report learnt as a label teaches the state it names.
    """

    def __init__(self, X, y, initial, exogenous_actions, action_dtype=np.intp):
        n_steps = X.shape[0]
        known = np.zeros(n_steps, dtype=bool)
        known[initial] = True
        self.state = StreamState(
            X=X,
            y=np.array(y, copy=True),
            known=known,
            labelled=list(initial),
            action=np.zeros(n_steps, dtype=action_dtype),
            exogenous_actions=exogenous_actions,
        )
        self.n_features = X.shape[1]

    @property
    def n_steps(self) -> int:
        return self.state.X.shape[0]

    @property
    def labelled(self) -> list:
        return self.state.labelled

    def rows(self, steps):
        """The features of ``steps``, as the stream holds them."""
        return take_rows(self.state.X, steps)

    def learn_label(self, step: int, label, action: int):
        """Mark ``step`` labelled with the action its state calls for."""
        state = self.state
        saved = (state.y[step], state.action[step], len(state.labelled))
        state.y[step] = label
        state.known[step] = True
        state.action[step] = action
        state.labelled.append(step)
        return saved

    def restore(self, step: int, saved) -> None:
        """Undo :meth:`learn_label`."""
        state = self.state
        state.y[step], state.action[step], n_labelled = saved
        state.known[step] = False
        del state.labelled[n_labelled:]

    def learn_report(self, step: int, action: int):
        """Set the action of a reported step (the rule records the posterior)."""
        saved = self.state.action[step]
        self.state.action[step] = action
        return saved

    def unreport(self, step: int, saved) -> None:
        """Undo :meth:`learn_report` and the rule's entry in ``soft``."""
        self.state.action[step] = saved
        self.state.soft.pop(step, None)

    def stream_state(self) -> StreamState:
        """The update rules' view of the stream."""
        return self.state
