"""Fixtures shared by several test modules."""

import pandas as pd
import pytest
from sklearn.utils.fixes import parse_version

# Before pandas 3.1 the default float converter of read_csv can be off in the
# last bit; its 'round_trip' converter is exact. 3.1 made every converter
# exact and deprecated the argument.
_EXACT_FLOATS = (
    {}
    if parse_version(pd.__version__) >= parse_version("3.1")
    else {"float_precision": "round_trip"}
)


@pytest.fixture
def read_tidy_csv():
    """Read a tidy CSV file of a study with every bit of its floats.

    It keeps every digit, not the dtypes (an all-missing label column of the
    learners is object in memory, float in a CSV).
    """

    def read(path) -> pd.DataFrame:
        return pd.read_csv(path, **_EXACT_FLOATS)

    return read
