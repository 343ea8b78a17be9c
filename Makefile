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
OLDEST_EXTRAS = test plot parallel
# The documentation tools (the docs extra) are installed on top of $(STAMP).
DOCS_STAMP = $(VENV)/.skrbal-docs-installed

.PHONY: demo test test-modal test-oldest test-postgres browser lint format bench docs docs-inventories clean

$(STAMP): pyproject.toml setup.cfg
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e ".[test,plot,modal,parallel,crosscheck,parquet]"
	touch $@

$(MODAL_STAMP): pyproject.toml setup.cfg
	$(PYTHON) -m venv $(MODAL_VENV)
	$(MODAL_VENV)/bin/python -m pip install --quiet --upgrade pip
	$(MODAL_VENV)/bin/python -m pip install --quiet "scikit-learn>=1.7,<1.8" \
		modAL-python pytest hypothesis -e .
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

test: lint
	$(WITH_POSTGRES) $(BIN)/python -m pytest
	$(MAKE) test-modal

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

test-oldest:
	rm -rf $(OLDEST_VENV)
	$(PYTHON) -m venv $(OLDEST_VENV)
	$(OLDEST_VENV)/bin/python -m pip install --quiet --upgrade pip
	$(PYTHON) .ci/lowest_constraints.py $(OLDEST_EXTRAS) > $(OLDEST_VENV)/constraints.txt
	$(OLDEST_VENV)/bin/python -m pip install --quiet \
		-c $(OLDEST_VENV)/constraints.txt -e ".[$(shell echo $(OLDEST_EXTRAS) | tr ' ' ',')]"
	$(OLDEST_VENV)/bin/python -m pip list --format=freeze | grep -i -E \
		"^(numpy|scipy|scikit-learn|pandas|joblib|tqdm|sqlalchemy|matplotlib|dask)=="
	$(WITH_POSTGRES) $(OLDEST_VENV)/bin/python -m pytest -p no:cacheprovider -q \
		--ignore=tests/test_packaging.py

docs: $(STAMP) $(DOCS_STAMP)
	$(BIN)/python -m sphinx -W --keep-going -b html docs docs/_build/html

# Regenerate the intersphinx inventories (docs/_intersphinx/*.inv) from the
# installed packages; the build itself reads the committed files offline.
docs-inventories: $(STAMP) $(DOCS_STAMP)
	$(BIN)/python -m pip install --quiet "sphobjinv>=2.4"
	$(BIN)/python docs/_intersphinx/make_inventories.py

$(DOCS_STAMP): $(STAMP)
	$(BIN)/python -m pip install --quiet -e ".[docs]"
	touch $@

# Benchmark modules are named bench_*.py so the test run never collects them.
bench: $(STAMP)
	OPENBLAS_NUM_THREADS=1 $(BIN)/python -m pytest benchmarks -o python_files="bench_*.py" \
		-o addopts="" --benchmark-only -p no:cacheprovider

clean:
	rm -rf $(VENV) $(MODAL_VENV) $(OLDEST_VENV) docs/_build docs/generated docs/auto_examples build dist *.egg-info .pytest_cache .benchmarks
