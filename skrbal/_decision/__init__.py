"""The one-step maintenance decision process and its value of information.

- ``_tables``: :class:`~skrbal._decision._tables.ProcessTables`, the
  process's validation, tables and decisions (EVPI, actions), without
  scikit-learn;
- ``_process``: :class:`DecisionProcess` (``ProcessTables`` with
  scikit-learn's estimator API and serialisation) and :func:`as_process`;
- ``_serialisation``: the process as a dict and as JSON, and back;
- ``_presets``: the processes of the paper's case studies.

``skrbal`` re-exports the public names; other packages import from here, never
from the modules above. The names are imported when first used (PEP 562), so
that importing ``_tables`` does not import scikit-learn.
"""

from skrbal._lazy import lazy_attributes

_LAZY = {
    "DecisionProcess": "skrbal._decision._process",
    "ProcessTables": "skrbal._decision._tables",
    "process_from_dict": "skrbal._decision._serialisation",
    "as_process": "skrbal._decision._process",
    "synthetic_decision_process": "skrbal._decision._presets",
    "z24_decision_process": "skrbal._decision._presets",
}

__all__ = sorted(_LAZY)

__getattr__, __dir__ = lazy_attributes(__name__, _LAZY, globals(), __all__)
