# Everything a fresh machine needs: `make demo` runs the main job on a simulated host, `make test` passes the tests.
PY ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
DEMO ?= demo-host

.PHONY: venv test lint demo bench clean

$(VENV)/.installed: pyproject.toml
	$(PY) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip
	$(BIN)/pip install -q -e '.[dev]'
	touch $@

venv: $(VENV)/.installed

lint: venv
	$(BIN)/ruff check kafka_ops tests benchmarks
	$(BIN)/ruff format --check kafka_ops tests benchmarks

test: lint
	$(BIN)/python -m pytest -q

demo: venv
	rm -rf $(DEMO)
	$(BIN)/kafka-ops simulate $(DEMO) --fail all
	$(BIN)/kafka-ops dump $(DEMO)/data/kafka-1 --max-index-entries 3 | head -n 40

bench: venv
	$(BIN)/python benchmarks/bench_engine.py

clean:
	rm -rf $(VENV) $(DEMO) .pytest_cache .ruff_cache
