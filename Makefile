# The two commands: `make lab` and `make test`. Only python3 (>= 3.11) is assumed.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
REQS := requirements.txt requirements-test.txt binder/requirements.txt pyproject.toml

.PHONY: lab test app bench notebooks check-notebooks clean

# (Re)install only when a requirements file changed. Installs the exact tested pins
# (binder/requirements.txt as constraints) plus the package, editable.
$(STAMP): $(REQS)
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade "pip>=24"
	$(BIN)/python -m pip install --quiet -r requirements.txt -r requirements-test.txt -c binder/requirements.txt
	$(BIN)/python -m pip install --quiet --no-deps -e .
	touch $(STAMP)

# Jupyter refuses to run as root unless told to (containers, CI machines): say so only then.
ALLOW_ROOT := $(if $(filter 0,$(shell id -u)),--allow-root,)

lab: $(STAMP)
	$(BIN)/jupyter lab $(ALLOW_ROOT) --ServerApp.root_dir=. notebooks/00_start_here.ipynb

app: $(STAMP)
	$(BIN)/voila --Voila.ip=127.0.0.1 notebooks

test: $(STAMP)
	$(BIN)/python -m pytest --nbval --nbval-current-env --nbval-cell-timeout=300 -p no:randomly

bench: $(STAMP)
	$(BIN)/python benchmarks/run_all.py

notebooks: $(STAMP)
	$(BIN)/python authoring/build.py

check-notebooks: $(STAMP)
	$(BIN)/python authoring/build.py --check

clean:
	rm -rf $(VENV) build *.egg-info
