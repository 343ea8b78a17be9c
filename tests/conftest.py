"""Shared fixtures: the agent-store backends (SQLite file, PostgreSQL server)."""

import os
import uuid

import pytest

POSTGRES_ENV = "SKRBAL_TEST_POSTGRES_URL"


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
