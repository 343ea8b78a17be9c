"""Fixtures shared by several test modules.

- ``read_tidy_csv``: read a study's CSV with every bit of its floats;
- ``store_url``: an empty agent store on each backend (a SQLite file, and a
  fresh schema on the PostgreSQL server of ``SKRBAL_TEST_POSTGRES_URL``).

Under pytest-xdist (``make test``) each worker gets a database of its own on
that server, and ``SKRBAL_TEST_POSTGRES_URL`` points at it in the worker and
the processes it starts: an agent's write lock is a PostgreSQL advisory lock,
which holds across the schemas of one database, so two workers' agents of the
same name would lock each other out there.
"""

import gc
import os
import time
import uuid

import pandas as pd
import pytest
from hypothesis import settings
from sklearn.utils.fixes import parse_version

try:
    import resource
except ImportError:  # pragma: no cover - Windows has no getrusage
    resource = None

# Property-based tests: SKRBAL_HYPOTHESIS_PROFILE picks the profile.
# - "ci", the default when CI=true: each test's own budget (tests/_examples.py),
#   the same examples replayed on every run, so a submission lands or fails
#   on its own merits, not on a newly drawn example;
# - "dev", the default otherwise: the same budgets, newly drawn each run, and
#   what fails is kept in .hypothesis/ and tried first next time;
# - "thorough" (make test-thorough): ten times each budget, newly drawn;
# - "oldest" (make test-oldest): a tenth of each budget, replayed. That run
#   proves each property's code runs on the lowest declared versions; how
#   many inputs a property holds for is the other runs' business.
settings.register_profile("ci", derandomize=True, print_blob=True)
settings.register_profile("dev")
settings.register_profile("thorough", max_examples=1000, print_blob=True)
settings.register_profile("oldest", max_examples=10, derandomize=True, print_blob=True)
_CI = os.environ.get("CI", "").lower() in ("1", "true", "yes")
settings.load_profile(
    os.environ.get("SKRBAL_HYPOTHESIS_PROFILE") or ("ci" if _CI else "dev")
)

# Before pandas 3.1 the default float converter of read_csv can be off in the
# last bit; its 'round_trip' converter is exact. 3.1 made every converter
# exact and deprecated the argument.
_EXACT_FLOATS = (
    {}
    if parse_version(pd.__version__) >= parse_version("3.1")
    else {"float_precision": "round_trip"}
)

POSTGRES_ENV = "SKRBAL_TEST_POSTGRES_URL"


def _worker_database(url: str, name: str) -> str:
    """Create database ``name`` (anew) on the server of ``url``; its URL."""
    import sqlalchemy

    engine = sqlalchemy.create_engine(url, isolation_level="AUTOCOMMIT")
    try:
        with engine.connect() as conn:
            conn.execute(sqlalchemy.text(f"DROP DATABASE IF EXISTS {name}"))
            conn.execute(sqlalchemy.text(f"CREATE DATABASE {name}"))
    finally:
        engine.dispose()
    worker_url = sqlalchemy.engine.make_url(url).set(database=name)
    return worker_url.render_as_string(hide_password=False)


def _drop_worker_database(url: str, name: str) -> None:
    import sqlalchemy

    engine = sqlalchemy.create_engine(url, isolation_level="AUTOCOMMIT")
    try:
        with engine.connect() as conn:
            # FORCE (PostgreSQL 13): agents some tests leave open still hold
            # connections.
            conn.execute(
                sqlalchemy.text(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")
            )
    except sqlalchemy.exc.SQLAlchemyError as exc:
        # Not a test failure; the next run on this server drops it first.
        print(f"conftest: test database {name} left on the server: {exc}")
    finally:
        engine.dispose()


_SERVER_DATABASE = pytest.StashKey[tuple[str, str]]()


def pytest_configure(config):
    worker = os.environ.get("PYTEST_XDIST_WORKER")
    url = os.environ.get(POSTGRES_ENV)
    if worker and url:
        from sqlalchemy.exc import OperationalError

        run = os.environ.get("PYTEST_XDIST_TESTRUNUID", uuid.uuid4().hex)[:12]
        name = f"skrbal_{worker}_{run}"
        try:
            os.environ[POSTGRES_ENV] = _worker_database(url, name)
        except OperationalError:
            return  # unreachable: the tests that need the server say so
        config.stash[_SERVER_DATABASE] = (url, name)


def pytest_unconfigure(config):
    server_database = config.stash.get(_SERVER_DATABASE, None)
    if server_database is not None:
        url, name = server_database
        os.environ[POSTGRES_ENV] = url
        _drop_worker_database(url, name)


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


@pytest.fixture(scope="module")
def postgres_module_schema_url():
    """URL of a fresh schema on the test server that lasts for a module: a
    template the tests of the module copy (``store_url``'s rules apply)."""
    yield from _postgres_schema_url()


@pytest.fixture(params=["sqlite", "postgresql"])
def store_url(request, tmp_path):
    """URL of an empty agent store, on each backend."""
    if request.param == "sqlite":
        yield str(tmp_path / "agents.db")
    else:
        yield from _postgres_schema_url()


# The oldest-versions run (make test-oldest) proves that the declared lower
# bounds work: every code path the suite runs must run there. It leaves out
# the tests below, marked ``stress``: each repeats, many times over, paths
# that the other tests also run (kill loops, state machines, whole documented
# sessions), to prove something that does not hang on a dependency's version
# (crash safety, sequences of calls, the text of the docs). They run in every
# other target. A test renamed or added is not in this list, so it runs on the
# oldest versions too: the list can only leave out what it names.
STRESS = {
    # test id (its start): what it repeats, and where those paths also run
    "tests/test_online_crash.py::test_agent_survives_sigkill": "a forked agent "
    "killed 50 times, resumed each time: test_online_store.py (restarts)",
    "tests/test_online_crash.py::test_keyed_replays_after_random_kills": "keyed "
    "calls replayed after 19 kills: test_online_idempotency.py and "
    "test_a_call_killed_after_its_commit_is_retried_with_its_key",
    "tests/test_online_store_stateful.py": "random sequences of the store's "
    "calls and restarts: each call in test_online_store*.py and "
    "test_online_idempotency.py",
    "tests/test_docs.py::test_shell_sessions_run_as_written": "the documented "
    "shell sessions, command by command: the same commands in "
    "test_cli_agent.py and test_cli_first_week.py",
    "tests/test_cli_agent.py::test_from_a_campaign_file_to_a_watched_agent": (
        "a study of decision accuracy, run through 20 commands: each command "
        "in the other tests of test_cli_agent.py"
    ),
}


# What a skip leaves unchecked, said where it is read: the summary. A suite
# without a browser skips the report page's headless-browser test, and one
# 's' among thousands of dots is not a warning (issue 28.24).
_SKIPPED_CHECKS = {
    "apt-get install chromium": (
        "the report page was NOT checked in a browser: no chromium or "
        "chromedriver (`make browser` installs them; SKRBAL_REQUIRE_BROWSER=1 "
        "makes this an error)"
    ),
}


def pytest_addoption(parser):
    parser.addoption(
        "--cpu-times",
        metavar="FILE",
        help="append each test's CPU seconds (its own and those of the "
        "subprocesses it waited for) and wall seconds to FILE, one "
        "tab-separated line a test (.ci/cpu_times.py sums them by file)",
    )


def _cpu_seconds():
    own = resource.getrusage(resource.RUSAGE_SELF)
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime, children.ru_utime + children.ru_stime


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item, nextitem):
    # CPU, not wall time: on a loaded machine only CPU seconds compare.
    path = item.config.getoption("cpu_times")
    if not path or resource is None:
        yield
        return
    (own, children), start = _cpu_seconds(), time.perf_counter()
    yield
    (own_after, children_after), wall = _cpu_seconds(), time.perf_counter() - start
    line = (
        f"{item.nodeid}\t{own_after - own:.3f}\t"
        f"{children_after - children:.3f}\t{wall:.3f}\n"
    )
    # one write of a short line to a file opened for appending: whole lines,
    # whatever the number of xdist workers writing beside it
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o666)
    try:
        os.write(fd, line.encode())
    finally:
        os.close(fd)


def pytest_collection_finish(session):
    # What collection built (every imported module, the parametrised values)
    # lives for the whole session: frozen, it is not walked again by each
    # full garbage collection. Those ran over a heap that had grown large
    # (test_memory_store_keys_are_never_reused: 10.2 -> 0.8 s of CPU).
    gc.freeze()


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config, items):
    for item in items:
        if any(item.nodeid.startswith(prefix) for prefix in STRESS):
            item.add_marker(pytest.mark.stress)


def pytest_terminal_summary(terminalreporter):
    for report in terminalreporter.stats.get("skipped", []):
        reason = str(getattr(report, "longrepr", ""))
        for marker, text in list(_SKIPPED_CHECKS.items()):
            if marker in reason:
                terminalreporter.write_sep("!", text, yellow=True, bold=True)
                _SKIPPED_CHECKS.pop(marker)
