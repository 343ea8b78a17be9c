# The two quick-start commands (`make demo`, `make test`) build a local virtual
# environment from nothing, so they work on a fresh machine with only Python 3.11+.
PYTHON ?= python3
VENV ?= .venv
BIN = $(VENV)/bin
STAMP = $(VENV)/.skrbal-installed
OUT ?= skrbal-results
# modAL 0.4.2 can only teach on scikit-learn < 1.8: a second environment runs
# the full modAL loop there.
MODAL_VENV ?= .venv-modal
MODAL_STAMP = $(MODAL_VENV)/.skrbal-installed
# The oldest declared version of every dependency (.ci/lowest_constraints.py
# pins each lower bound): CI proves the bounds in pyproject.toml really work.
OLDEST_VENV ?= .venv-oldest
OLDEST_STAMP = $(OLDEST_VENV)/.skrbal-installed
OLDEST_EXTRAS = test plot parallel
# The documentation tools (the docs extra) are installed on top of $(STAMP).
DOCS_STAMP = $(VENV)/.skrbal-docs-installed
# The suite runs on pytest-xdist workers, one per core by default
# (PYTEST_WORKERS=0 runs it in one process); worksteal hands a worker that
# is done the tests another has not started, so the slow ones do not queue.
PYTEST_WORKERS ?= auto
PYTEST_PARALLEL = -n $(PYTEST_WORKERS) --dist worksteal
# One BLAS thread per process: the workers already fill the cores, and
# OpenBLAS's own threads, spinning beside them, tripled the CPU time of
# tests/test_rvm.py and tests/test_gmm.py (and slowed them).
ONE_BLAS_THREAD = OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1 MKL_NUM_THREADS=1
# The tests start the `skrbal` command in hundreds of subprocesses. Where the
# environment sets PYTHONDONTWRITEBYTECODE (this machine image does), each of
# them compiled skrbal from source again, as an installed package never does;
# an empty value lets the first one write the bytecode the others read.
WITH_BYTECODE = PYTHONDONTWRITEBYTECODE=

.PHONY: demo env-oldest env-docs test test-suite test-thorough test-modal test-oldest test-postgres browser lint format bench docs docs-inventories clean

# An editable install writes skrbal.egg-info/ into this folder, so installs
# made side by side (make -j) take turns where flock(1) exists.
ONE_AT_A_TIME := $(if $(shell command -v flock 2>/dev/null),flock .install.lock)
# Options of every pip install. CI passes INSTALL_FLAGS=--no-compile (.ci/run):
# pip otherwise compiles every module it installs (8,000 files in .venv, 34
# of its 50 CPU seconds), where a run imports a fraction of them, and writes
# their bytecode on first import (WITH_BYTECODE). A developer's environment,
# used for timings, keeps pip's compiled bytecode.
PIP_INSTALL = -m pip install --quiet $(INSTALL_FLAGS)

$(STAMP): pyproject.toml setup.cfg
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python $(PIP_INSTALL) --upgrade pip
	$(ONE_AT_A_TIME) $(BIN)/python $(PIP_INSTALL) \
		-e ".[test,plot,modal,parallel,crosscheck,parquet]"
	touch $@

$(MODAL_STAMP): pyproject.toml setup.cfg
	$(PYTHON) -m venv $(MODAL_VENV)
	$(MODAL_VENV)/bin/python $(PIP_INSTALL) --upgrade pip
	$(ONE_AT_A_TIME) $(MODAL_VENV)/bin/python $(PIP_INSTALL) \
		"scikit-learn>=1.7,<1.8" modAL-python pytest hypothesis -e .
	touch $@

demo: $(STAMP)
	$(BIN)/skrbal run --out $(OUT) --overwrite

lint: $(STAMP)
	$(BIN)/ruff check skrbal tests benchmarks
	$(BIN)/ruff format --check skrbal tests benchmarks

format: $(STAMP)
	$(BIN)/ruff check --fix skrbal tests benchmarks
	$(BIN)/ruff format skrbal tests benchmarks

# With PostgreSQL installed (initdb on the PATH or in /usr/lib/postgresql),
# the suite runs next to a throwaway server (.ci/with-postgres exports
# SKRBAL_TEST_POSTGRES_URL), so the agent-store tests cover both backends;
# without it they run on SQLite only. A URL already set is used as it is.
PG_INITDB := $(firstword $(shell command -v initdb 2>/dev/null) \
	$(wildcard /usr/lib/postgresql/*/bin/initdb))
WITH_POSTGRES := $(if $(SKRBAL_TEST_POSTGRES_URL),,$(if $(PG_INITDB),.ci/with-postgres))

# In this order; with make -j, .venv-modal is installed while the suite runs.
test: test-suite test-modal

test-suite: lint
	$(WITH_BYTECODE) $(ONE_BLAS_THREAD) $(WITH_POSTGRES) $(BIN)/python -m pytest $(PYTEST_PARALLEL)

# The environments of the oldest versions and of the docs. The docs tools go
# into .venv, so never while .venv's suite runs: CI installs them first, then
# runs the suites and the docs build side by side (.ci/run).
env-oldest: $(OLDEST_STAMP)
env-docs: $(DOCS_STAMP)

# A nightly-style run: the property-based tests with ten times the examples,
# freshly drawn (`make test` replays a fixed set, see tests/conftest.py), and
# every cell of the grids that `make test` covers pairwise (tests/_grids.py).
test-thorough: $(STAMP)
	SKRBAL_HYPOTHESIS_PROFILE=thorough $(ONE_BLAS_THREAD) $(WITH_POSTGRES) \
		$(BIN)/python -m pytest \
		$(PYTEST_PARALLEL) -p no:cacheprovider -q

# Only the agent-store tests, on SQLite and a throwaway PostgreSQL server.
test-postgres: $(STAMP)
	SKRBAL_REQUIRE_POSTGRES=1 .ci/with-postgres $(BIN)/python -m pytest \
		tests/test_online_store.py tests/test_online_crash.py -o addopts="" \
		-p no:cacheprovider -q

# Debian's chromium and its driver, for the report page's headless-browser
# test (tests/test_agent_report.py, which skips without them unless
# SKRBAL_REQUIRE_BROWSER=1); installed with apt-get only if missing.
browser:
	@command -v chromium >/dev/null && command -v chromedriver >/dev/null || { \
		apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install \
		-y -qq --no-install-recommends chromium chromium-driver >/dev/null; }

test-modal: $(MODAL_STAMP)
	SKRBAL_REQUIRE_MODAL_LOOP=1 $(MODAL_VENV)/bin/python -m pytest \
		tests/test_modal_loop.py -o addopts="" -p no:cacheprovider -q

# Built from nothing whenever a declared bound may have moved.
$(OLDEST_STAMP): pyproject.toml setup.cfg .ci/lowest_constraints.py
	rm -rf $(OLDEST_VENV)
	$(PYTHON) -m venv $(OLDEST_VENV)
	$(OLDEST_VENV)/bin/python $(PIP_INSTALL) --upgrade pip
	$(PYTHON) .ci/lowest_constraints.py $(OLDEST_EXTRAS) > $(OLDEST_VENV)/constraints.txt
	$(ONE_AT_A_TIME) $(OLDEST_VENV)/bin/python $(PIP_INSTALL) \
		-c $(OLDEST_VENV)/constraints.txt -e ".[$(shell echo $(OLDEST_EXTRAS) | tr ' ' ',')]"
	touch $@

# Every test but those marked `stress` (they repeat paths other tests run:
# tests/conftest.py lists them, with where), the property-based tests with a
# tenth of their examples (profile `oldest`), and not the packaging test
# (it builds with the current tools). The first week's sessions call the
# command in this process, not in a subprocess that imports every library
# again (tests/_cli_runner.py: what that leaves to the other runs, and why).
test-oldest: $(OLDEST_STAMP)
	$(OLDEST_VENV)/bin/python -m pip list --format=freeze | grep -i -E \
		"^(numpy|scipy|scikit-learn|pandas|joblib|tqdm|sqlalchemy|matplotlib|dask|pytest-xdist)=="
	SKRBAL_HYPOTHESIS_PROFILE=oldest SKRBAL_TEST_CLI_IN_PROCESS=1 \
		$(WITH_BYTECODE) $(ONE_BLAS_THREAD) $(WITH_POSTGRES) \
		$(OLDEST_VENV)/bin/python -m pytest $(PYTEST_PARALLEL) \
		-p no:cacheprovider -q --ignore=tests/test_packaging.py -m "not stress"

# One BLAS thread: in CI the gallery's examples run beside the suites.
docs: $(STAMP) $(DOCS_STAMP)
	$(ONE_BLAS_THREAD) $(BIN)/python -m sphinx -W --keep-going -b html docs docs/_build/html

# Regenerate the intersphinx inventories (docs/_intersphinx/*.inv) from the
# installed packages; the build itself reads the committed files offline.
docs-inventories: $(STAMP) $(DOCS_STAMP)
	$(BIN)/python $(PIP_INSTALL) "sphobjinv>=2.4"
	$(BIN)/python docs/_intersphinx/make_inventories.py

$(DOCS_STAMP): $(STAMP)
	$(ONE_AT_A_TIME) $(BIN)/python $(PIP_INSTALL) -e ".[docs]"
	touch $@

# Benchmark modules are named bench_*.py so the test run never collects them.
bench: $(STAMP)
	OPENBLAS_NUM_THREADS=1 $(BIN)/python -m pytest benchmarks -o python_files="bench_*.py" \
		-o addopts="" --benchmark-only -p no:cacheprovider

clean:
	rm -rf $(VENV) $(MODAL_VENV) $(OLDEST_VENV) .install.lock docs/_build docs/generated docs/auto_examples build dist *.egg-info .pytest_cache .benchmarks
