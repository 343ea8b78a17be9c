# The two quick-start commands (`make demo`, `make test`) build a local virtual
# environment from nothing, so they work on a fresh machine with only Python 3.11+.
PYTHON ?= python3
VENV ?= .venv
BIN = $(VENV)/bin
STAMP = $(VENV)/.skrbal-installed
OUT ?= skrbal-results

.PHONY: demo test lint format bench clean

$(STAMP): pyproject.toml setup.cfg
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e ".[test,plot,modal,parallel]"
	touch $@

demo: $(STAMP)
	$(BIN)/skrbal run --out $(OUT)

lint: $(STAMP)
	$(BIN)/ruff check skrbal tests benchmarks
	$(BIN)/ruff format --check skrbal tests benchmarks

format: $(STAMP)
	$(BIN)/ruff check --fix skrbal tests benchmarks
	$(BIN)/ruff format skrbal tests benchmarks

test: lint
	$(BIN)/python -m pytest

bench: $(STAMP)
	$(BIN)/python -m pytest benchmarks --benchmark-only --benchmark-columns=min,median,mean,rounds -p no:cacheprovider

clean:
	rm -rf $(VENV) build dist *.egg-info .pytest_cache .benchmarks
