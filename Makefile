# featurehub: the front door. `make run` and `make test` set themselves up on a bare machine.
PYTHON ?= python3.11
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed

.PHONY: run test install codegen codegen-check lint bench clean

$(STAMP): pyproject.toml
	@command -v $(PYTHON) >/dev/null 2>&1 || { echo "$(PYTHON) not found: install Python 3.11 or run make PYTHON=python3"; exit 1; }
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip
	$(BIN)/pip install -q -e '.[dev]'
	@touch $(STAMP)

install: $(STAMP)

run: $(STAMP)
	$(BIN)/featurehub serve

codegen: $(STAMP)
	$(BIN)/python codegen/generate.py

codegen-check: $(STAMP)
	$(BIN)/python codegen/generate.py --check

lint: $(STAMP)
	$(BIN)/ruff check src tests codegen benchmarks

# Tests run on TEST_PROCESSES processes (pytest-xdist); each uses its own databases and ports.
TEST_PROCESSES ?= 2

test: $(STAMP) codegen-check lint
	$(BIN)/python -m pytest -n $(TEST_PROCESSES)

bench: $(STAMP)
	$(BIN)/python benchmarks/ingest.py

clean:
	rm -rf $(VENV) var build src/*.egg-info
