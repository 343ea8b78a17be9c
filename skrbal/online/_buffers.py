"""What a live agent knows about its steps, in arrays that grow with the stream.

The update rules of :mod:`skrbal.active._semi` read a
:class:`~skrbal.active._semi.StreamState` of fixed-size arrays indexed by
stream step; an agent's stream grows, so it keeps growable buffers and hands
the rules a ``StreamState`` of views over the steps seen so far.
"""

from __future__ import annotations

import numpy as np

from skrbal.active._semi import StreamState


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


class StepBuffers:
    """Features, labels, known flags and actions of every step so far."""

    def __init__(self, n_features: int, classes: np.ndarray):
        self.X = GrowableArray((n_features,), dtype=np.float64)
        self.y = GrowableArray(dtype=classes.dtype, fill=classes[0])
        self.known = GrowableArray(dtype=bool, fill=False)
        self.action = GrowableArray(dtype=np.intp)
        self.user_action = GrowableArray(dtype=bool, fill=False)
        self.labelled: list = []

    @property
    def n_steps(self) -> int:
        return self.X.size

    def extend(self, X, action, y=None) -> None:
        """Append steps; with ``y``, their labels are known."""
        n = X.shape[0]
        self.X.extend(X)
        self.action.extend(action)
        self.user_action.extend(np.zeros(n, dtype=bool))
        if y is None:
            self.y.extend(np.full(n, self.y._fill))
            self.known.extend(np.zeros(n, dtype=bool))
        else:
            first = self.known.size
            self.y.extend(y)
            self.known.extend(np.ones(n, dtype=bool))
            self.labelled.extend(range(first, first + n))

    def stream_state(self) -> StreamState:
        """The update rules' view of the steps so far."""
        return StreamState(
            X=self.X.view,
            y=self.y.view,
            known=self.known.view,
            labelled=self.labelled,
            action=self.action.view,
            exogenous_actions=None,
        )
