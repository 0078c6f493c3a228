# Two entry points: `make run` (the built-in default job) and `make test` (the whole suite).
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: run test lint format bench gates mutants clean

# The package, then one thin distribution per env (environments/<id>/, its verifiers module),
# installed as real files: an editable finder would lose to tests/<env>/ on sys.path. Then the
# held-out families (heldout/, a distribution of its own that the public package never holds),
# editable so the tests play what is in the tree.
$(STAMP): pyproject.toml $(wildcard environments/*/pyproject.toml) heldout/pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e ".[all,dev]"
	$(BIN)/python -m pip install --quiet --no-deps $(wildcard environments/*)
	$(BIN)/python -m pip install --quiet --no-deps -e heldout
	touch $(STAMP)

run: $(STAMP)
	$(BIN)/datagauntlet calibrate --report runs/report.html --force

# Two pytest workers, whole files each (a file's session fixtures are built once): the suite
# takes about half the time of one process on two cores.
TEST_WORKERS ?= 2
test: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/python -m pytest -n $(TEST_WORKERS) --dist loadfile

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

format: $(STAMP)
	$(BIN)/ruff format .
	$(BIN)/ruff check --fix .

bench: $(STAMP)
	$(BIN)/python benchmarks/run_all.py

# Every gate of every env over its whole eval and test splits (the tests run a sample), and
# event-recon's over its 120 public tasks, rewriting docs/envs/event-recon-gates.json and the
# table in docs/envs/event-recon.md rendered from it (and its private split's figures when a
# secret is set); then the long tests: full sweeps and every env's wheel.
gates: $(STAMP)
	$(BIN)/datagauntlet gates --split eval --workers 2
	$(BIN)/datagauntlet gates --split test --workers 2
	$(BIN)/python -m datagauntlet.envs.event_recon.gates.gate_report --workers 2 --write
	if [ -n "$$DATAGAUNTLET_SECRET$$DATAGAUNTLET_SECRET_FILE" ]; then $(BIN)/python -m datagauntlet.envs.event_recon.gates.gate_report --split private --workers 2 --write; fi
	if [ -d tests/event_recon ]; then DATAGAUNTLET_GATES=1 $(BIN)/python -m pytest tests/event_recon -q; fi
	DATAGAUNTLET_GATES=1 $(BIN)/python -m pytest tests/frontdoors/test_fd_env_wheels.py tests/frontdoors/test_fd_vf_cli.py -q

# Mutation testing of the graders and the layers under them, not part of `make test`
# (docs/mutation/README.md). Incremental: `rm -rf mutants` for a run from scratch.
# Niced on a shared machine; `make mutants NICE=` for a measured run at normal priority.
NICE ?= nice -n 19
mutants: $(STAMP)
	$(NICE) $(BIN)/python scripts/mutation_report.py run --write docs/mutation/report.md
	$(BIN)/python scripts/mutation_report.py survivors --write docs/mutation/survivors.md > /dev/null

clean:
	rm -rf $(VENV) .pytest_cache .ruff_cache mutants
