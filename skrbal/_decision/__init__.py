"""The one-step maintenance decision process and its value of information.

- ``_process``: :class:`DecisionProcess` (validation, decisions, EVPI) and
  :func:`as_process`;
- ``_serialisation``: the process as a dict and as JSON, and back;
- ``_presets``: the processes of the paper's case studies.

``skrbal`` re-exports the public names; other packages import from here, never
from the modules above.
"""

from skrbal._decision._presets import (
    synthetic_decision_process,
    z24_decision_process,
)
from skrbal._decision._process import DecisionProcess, as_process

__all__ = [
    "DecisionProcess",
    "as_process",
    "synthetic_decision_process",
    "z24_decision_process",
]
