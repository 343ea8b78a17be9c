"""The example budget of a property-based test under the loaded profile.

A test states its budget as it would under hypothesis' default of 100
examples; the profile tests/conftest.py loads scales it: as written in CI (a
fixed, replayed set) and in local runs, ten times over in the thorough
profile (``make test-thorough``).
"""

from hypothesis import settings

# hypothesis' own default max_examples, which the budgets are written against.
_DEFAULT = 100


def examples(n: int) -> int:
    """``n`` examples, scaled by the loaded profile's ``max_examples``."""
    return max(1, n * settings.default.max_examples // _DEFAULT)
