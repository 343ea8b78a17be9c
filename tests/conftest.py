"""Fixtures shared by several test modules.

- ``read_tidy_csv``: read a study's CSV with every bit of its floats;
- ``store_url``: an empty agent store on each backend (a SQLite file, and a
  fresh schema on the PostgreSQL server of ``SKRBAL_TEST_POSTGRES_URL``).
"""

import os
import uuid

import pandas as pd
import pytest
from hypothesis import settings
from sklearn.utils.fixes import parse_version

# CI (CI=true) replays the same hypothesis examples on every run, so a
# submission lands or fails on its own merits, not on a newly drawn example;
# local runs keep exploring and store what they find in .hypothesis/.
settings.register_profile("ci", derandomize=True, print_blob=True)
if os.environ.get("CI", "").lower() in ("1", "true", "yes"):
    settings.load_profile("ci")

# Before pandas 3.1 the default float converter of read_csv can be off in the
# last bit; its 'round_trip' converter is exact. 3.1 made every converter
# exact and deprecated the argument.
_EXACT_FLOATS = (
    {}
    if parse_version(pd.__version__) >= parse_version("3.1")
    else {"float_precision": "round_trip"}
)

POSTGRES_ENV = "SKRBAL_TEST_POSTGRES_URL"


@pytest.fixture
def read_tidy_csv():
    """Read a tidy CSV file of a study with every bit of its floats.

    It keeps every digit, not the dtypes (an all-missing label column of the
    learners is object in memory, float in a CSV).
    """

    def read(path) -> pd.DataFrame:
        frame = pd.read_csv(path, **_EXACT_FLOATS)
        if "warnings" in frame.columns:
            # A CSV cannot tell an empty text (no warning) from a missing one.
            frame["warnings"] = frame["warnings"].astype(object).fillna("").astype(str)
        return frame

    return read


def _postgres_schema_url():
    """A fresh schema on the test server; yields its URL, drops it after."""
    url = os.environ.get(POSTGRES_ENV)
    if not url:
        if os.environ.get("SKRBAL_REQUIRE_POSTGRES", "") not in ("", "0"):
            pytest.fail(
                f"SKRBAL_REQUIRE_POSTGRES is set but {POSTGRES_ENV} is not: "
                "the PostgreSQL server did not start."
            )
        pytest.skip(
            f"{POSTGRES_ENV} is not set (`make test` starts a server when "
            "PostgreSQL is installed)"
        )
    sqlalchemy = pytest.importorskip("sqlalchemy")
    schema = f"t_{uuid.uuid4().hex[:16]}"
    engine = sqlalchemy.create_engine(url)
    try:
        with engine.begin() as conn:
            conn.execute(sqlalchemy.text(f"CREATE SCHEMA {schema}"))
    except sqlalchemy.exc.OperationalError as exc:
        engine.dispose()
        # Set but unreachable is a broken CI, not a reason to skip.
        pytest.fail(f"{POSTGRES_ENV}={url} is set but the server is unreachable: {exc}")
    separator = "&" if "?" in url else "?"
    yield f"{url}{separator}options=-csearch_path%3D{schema}"
    with engine.begin() as conn:
        conn.execute(sqlalchemy.text(f"DROP SCHEMA {schema} CASCADE"))
    engine.dispose()


@pytest.fixture(params=["sqlite", "postgresql"])
def store_url(request, tmp_path):
    """URL of an empty agent store, on each backend."""
    if request.param == "sqlite":
        yield str(tmp_path / "agents.db")
    else:
        yield from _postgres_schema_url()
