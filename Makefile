# The two commands: `make lab` and `make test`. Only python3 (>= 3.11) and make are assumed.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
REQS := requirements.txt requirements-test.txt binder/requirements.txt pyproject.toml

# `make test-lowest`: the floor of every range, on Python 3.11 (Debian 12's python3.11 is 3.11.2).
LOWEST_PYTHON ?= python3.11
LOWEST_VENV := .venv-lowest
LOWEST_STAMP := $(LOWEST_VENV)/.installed
# The test tools as pinned in requirements-test.txt; nbclient and nbformat as voila 0.5.0 resolves them (older).
LOWEST_TOOLS := pytest==9.2.0 hypothesis==6.170.17 nbval==0.11.0 nbclient==0.7.4 nbformat==5.11.1 jupytext==1.19.6

PYTEST := $(BIN)/python -m pytest -p no:randomly

.PHONY: setup lab test test-fast test-lowest lint app bench notebooks check-notebooks clean
.PHONY: site test-site

# The environment is built from scratch whenever a requirements file changes, so a requirement
# removed from the files is gone from .venv too, and a set-up that was interrupted (no stamp:
# say a venv without pip) is simply redone. Installs the exact tested pins
# (binder/requirements.txt as constraints) plus the package, editable.
# One set-up at a time: `make lab` in one terminal and `make test` in another both need .venv, so
# the set-up holds a lock (flock on the Makefile itself, through Python's fcntl: no extra tool);
# the second waits, then finds the stamp up to date and reuses the environment.
define LOCKED_SETUP
import fcntl, subprocess, sys
with open("Makefile") as lock:
    try:
        fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        print("Another set-up of .venv is running (make lab or make test elsewhere): waiting for it ...", flush=True)
        fcntl.flock(lock, fcntl.LOCK_EX)
    sys.exit(subprocess.call(sys.argv[1:]))
endef
export LOCKED_SETUP

# A set-up belongs to one checkout: the stamp records its real path. A copy (cp -a, rsync -a, tar: a
# backup, a teacher's variant) or a moved or renamed checkout keeps .venv, whose editable install and
# script shebangs name the old folder: its notebooks would import the *other* checkout's sdpa_helpers,
# or fail (`.venv/bin/voila: bad interpreter`). Such a set-up is stale whatever its date, and is redone
# here, with one line saying why. (A stamp from before the record: the folder pip's shebang names;
# neither there: nothing says it is another checkout's, and it is kept.)
CHECKOUT := $(shell pwd -P)
venv_checkout = $(or $(shell cat $(1)/.installed 2>/dev/null),$(shell sed -n '1s|^\#!\(.*\)/$(1)/bin/python[0-9.]*$$|\1|p' $(1)/bin/pip 2>/dev/null))
.PHONY: .another-checkout
VENV_OWNER := $(if $(wildcard $(STAMP)),$(call venv_checkout,$(VENV)))
ifneq ($(VENV_OWNER),)
ifneq ($(VENV_OWNER),$(CHECKOUT))
VENV_ELSEWHERE := $(VENV_OWNER)
$(STAMP): .another-checkout
endif
endif

$(STAMP): $(REQS)
	@$(if $(VENV_ELSEWHERE),echo "$(VENV) belongs to $(VENV_ELSEWHERE) and this checkout is $(CHECKOUT) (a copy or a move): setting it up again for this one")
	@$(PYTHON) -c 'import sys; sys.exit(sys.version_info < (3, 11))' 2>/dev/null || \
	  { echo "The course needs Python 3.11 or newer; '$(PYTHON)' is $$($(PYTHON) --version 2>&1). Run: make PYTHON=python3.11 ..."; exit 1; }
	@$(PYTHON) -c "$$LOCKED_SETUP" $(MAKE) --no-print-directory PYTHON="$(PYTHON)" venv-setup-locked

# Only under the lock (see above): a set-up another command finished meanwhile is reused.
.PHONY: venv-setup-locked
venv-setup-locked:
	@if [ -f $(STAMP) ] && [ -z "$$(find $(REQS) -newer $(STAMP) 2>/dev/null)" ] && [ "$$(cat $(STAMP))" = "$$(pwd -P)" ]; then \
	  echo "$(VENV) is up to date (set up by the other command): reusing it"; exit 0; fi; \
	set -e; rm -rf $(VENV); \
	echo "$(PYTHON) -m venv $(VENV)"; \
	$(PYTHON) -m venv $(VENV) || { rm -rf $(VENV); \
	  if $(PYTHON) -c 'import ensurepip, venv' 2>/dev/null; then echo "'$(PYTHON) -m venv $(VENV)' failed: see the error above"; \
	  else echo "'$(PYTHON) -m venv' failed: this Python has no venv/ensurepip. On Debian/Ubuntu: sudo apt-get install python3-venv"; fi; exit 1; }; \
	echo "installing the pinned requirements into $(VENV) (1-3 min)"; \
	$(BIN)/python -m pip install --quiet --upgrade "pip>=24"; \
	$(BIN)/python -m pip install --quiet -r requirements.txt -r requirements-test.txt -c binder/requirements.txt; \
	$(BIN)/python -m pip install --quiet --no-deps -e .; \
	pwd -P > $(STAMP)

# Jupyter refuses to run as root unless told to (containers, CI machines): say so only then.
ALLOW_ROOT := $(if $(filter 0,$(shell id -u)),--allow-root,)

# A HOME Jupyter cannot write to (read-only, or missing): its runtime, data, settings and
# IPython/matplotlib dirs go under .venv/home instead, and it says so. Only this user may read it
# (mode 700): the IPython history (what the learner typed) and the settings are theirs, whoever
# else can read the checkout (a classroom server's shared folder).
FALLBACK_HOME := $(CURDIR)/$(VENV)/home

# JupyterLab stops cleanly on SIGTERM and Ctrl-C (kernels shut down, runtime files removed) but
# dies on the spot on SIGHUP (its terminal closed) and SIGQUIT (Ctrl-\), leaving its kernels to
# notice alone and its runtime files behind: `make lab` turns those two into SIGTERM.
define LAB_STOPS_ON_HANGUP
import os, signal, sys
from jupyterlab.labapp import main
for name in ("SIGHUP", "SIGQUIT"):
    signal.signal(getattr(signal, name), lambda *_: os.kill(os.getpid(), signal.SIGTERM))
sys.argv[0] = "jupyter-lab"
sys.exit(main())
endef
export LAB_STOPS_ON_HANGUP

HOME_OR_FALLBACK = if [ -n "$$JUPYTER_RUNTIME_DIR" ] || { mkdir -p "$$HOME" && [ -w "$$HOME" ]; } 2>/dev/null; then :; else \
	  echo "HOME ($$HOME) is not writable: Jupyter keeps its runtime, data and settings in $(FALLBACK_HOME) instead"; \
	  mkdir -p "$(FALLBACK_HOME)" && chmod 700 "$(FALLBACK_HOME)"; \
	  export JUPYTER_RUNTIME_DIR="$(FALLBACK_HOME)/runtime" JUPYTER_DATA_DIR="$(FALLBACK_HOME)/data" \
	    JUPYTERLAB_SETTINGS_DIR="$(FALLBACK_HOME)/lab-settings" JUPYTERLAB_WORKSPACES_DIR="$(FALLBACK_HOME)/lab-workspaces" \
	    IPYTHONDIR="$(FALLBACK_HOME)/ipython" MPLCONFIGDIR="$(FALLBACK_HOME)/matplotlib"; \
	fi

# MALLOC_MMAP_THRESHOLD_: every array of 1 MiB or more is mapped and given back when freed, so a kernel keeps
# less after a notebook (as binder/start does; benchmarks/results.md, "Kernel memory per notebook").
lab: $(STAMP)
	@$(HOME_OR_FALLBACK); \
	export MALLOC_MMAP_THRESHOLD_="$${MALLOC_MMAP_THRESHOLD_:-1048576}"; \
	echo "$(BIN)/jupyter lab $(ALLOW_ROOT) --ServerApp.root_dir=. notebooks/00_start_here.ipynb"; \
	exec $(BIN)/python -c "$$LAB_STOPS_ON_HANGUP" $(ALLOW_ROOT) --ServerApp.root_dir=. notebooks/00_start_here.ipynb

# The notebooks as apps (Voila), for this user on this machine only (scripts/serve_app.py): 127.0.0.1,
# a token (the URL with it is printed and opened, as `make lab` does), the Host check on, kernel
# websockets v1 only (a legacy one could hang Voila 0.5.13 for good); SIGHUP and SIGQUIT stop it as
# SIGTERM does (kernels shut down, its connection files removed).
app: $(STAMP)
	@$(HOME_OR_FALLBACK); \
	echo "$(BIN)/python scripts/serve_app.py notebooks"; \
	exec $(BIN)/python scripts/serve_app.py notebooks

# The whole suite, and the CI command: unit tests, doctests, lint and types, strict nbval,
# notebook structure, Binder, the pinned set's resolution, and the browser tests; then strict
# nbval again under a second numeric configuration (tests/second_numeric_config.py).
# `make setup`: only build .venv (what `make lab` and `make test` do first), nothing opened or run.
setup: $(STAMP)

test: $(STAMP)
	$(PYTEST) --nbval --nbval-current-env --nbval-cell-timeout=300
	$(BIN)/python tests/second_numeric_config.py notebooks

# The edit-test loop: no browser, no notebooks, no network, no lint (`make lint`); on two cores, with
# pytest's rewritten test modules cached in __pycache__ even where the environment says not to.
# Every module keeps tests of its behaviour here; `make test` adds the slow and thorough ones.
test-fast: $(STAMP)
	env -u PYTHONDONTWRITEBYTECODE $(PYTEST) -p no:nbval -n 2 -q -m "not browser and not slow and not network and not lint" tests sdpa_helpers

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/mypy

# The lowest versions the ranges claim, on Python 3.11: the unit tests, and every notebook
# executed without error (nbval-lax: last digits may differ across versions, so no strict
# comparison of outputs). The pinned set stays what `make test` and Binder use.
LOWEST_OWNER := $(if $(wildcard $(LOWEST_STAMP)),$(call venv_checkout,$(LOWEST_VENV)))
ifneq ($(LOWEST_OWNER),)
ifneq ($(LOWEST_OWNER),$(CHECKOUT))
LOWEST_ELSEWHERE := $(LOWEST_OWNER)
$(LOWEST_STAMP): .another-checkout
endif
endif

$(LOWEST_STAMP): requirements.txt requirements-lowest.txt pyproject.toml
	@$(if $(LOWEST_ELSEWHERE),echo "$(LOWEST_VENV) belongs to $(LOWEST_ELSEWHERE) and this checkout is $(CHECKOUT) (a copy or a move): setting it up again for this one")
	rm -rf $(LOWEST_VENV)
	$(LOWEST_PYTHON) -m venv $(LOWEST_VENV) || { rm -rf $(LOWEST_VENV); \
	  echo "'$(LOWEST_PYTHON) -m venv' failed: set LOWEST_PYTHON to a Python 3.11 (Debian: apt-get install python3.11-venv)"; exit 1; }
	$(LOWEST_VENV)/bin/python -m pip install --quiet --upgrade "pip>=24"
	$(LOWEST_VENV)/bin/python -m pip install --quiet -r requirements.txt -c requirements-lowest.txt $(LOWEST_TOOLS)
	$(LOWEST_VENV)/bin/python -m pip install --quiet --no-deps -e .
	pwd -P > $(LOWEST_STAMP)

test-lowest: $(LOWEST_STAMP)
	$(LOWEST_VENV)/bin/python -c 'import sys, numpy, matplotlib, ipywidgets; print("Python", sys.version.split()[0], "numpy", numpy.__version__, "matplotlib", matplotlib.__version__, "ipywidgets", ipywidgets.__version__)'
	$(LOWEST_VENV)/bin/python -m pytest -p no:randomly -m "not browser and not pinned and not network and not lint" tests sdpa_helpers
	$(LOWEST_VENV)/bin/python -m pytest -p no:randomly --nbval-lax --nbval-current-env --nbval-cell-timeout=300 notebooks

bench: $(STAMP)
	$(BIN)/python benchmarks/run_all.py

notebooks: $(STAMP)
	$(BIN)/python authoring/build.py

check-notebooks: $(STAMP)
	$(BIN)/python authoring/build.py --check

clean:
	rm -rf $(VENV) $(LOWEST_VENV) build *.egg-info .mypy_cache .ruff_cache
	rm -rf .venv-site node_modules

# `make site`: the whole course as a static site in build/site (docs/site.md), offline.
# `make site SITE_REPO=owner/name` points its Binder and source links at that repository (the Pages
# workflow passes the one it runs in); without it they keep the placeholder OWNER/REPO. Its own
# environment (.venv-site from requirements-site.txt: the learner's .venv does not grow) and
# MathJax from npm, pinned with its integrity hash in package-lock.json (`npm ci`). Rebuilt only
# when a notebook, the package, the site's sources or a pin changed (the browser tests reuse it).
SITE_VENV := .venv-site
SITE_STAMP := $(SITE_VENV)/.installed
SITE_OUT := build/site
SITE_INPUTS := $(wildcard notebooks/*.ipynb notebooks/figures/*) $(wildcard sdpa_helpers/*.py sdpa_helpers/*/*.py sdpa_helpers/data/*) $(wildcard sdpa_helpers/widgets/explorer.js authoring/explorer_cells.py authoring/teaching.py authoring/notebooks/*.py authoring/site/*.py authoring/site/templates/* authoring/site/static/*)

$(SITE_STAMP): requirements-site.txt binder/requirements.txt
	rm -rf $(SITE_VENV)
	$(PYTHON) -m venv $(SITE_VENV)
	$(SITE_VENV)/bin/python -m pip install --quiet --upgrade "pip>=24"
	$(SITE_VENV)/bin/python -m pip install --quiet -r requirements-site.txt -c binder/requirements.txt
	touch $(SITE_STAMP)

node_modules/.installed: package.json package-lock.json
	npm ci --ignore-scripts --no-audit --no-fund
	touch node_modules/.installed

# SITE_REPO is part of what the site is built from: a build for another repository is a new build.
SITE_REPO_STAMP := build/.site-repo
$(SITE_REPO_STAMP): FORCE
	@mkdir -p build; echo '$(SITE_REPO)' | cmp -s - $@ || echo '$(SITE_REPO)' > $@
.PHONY: FORCE
FORCE:

$(SITE_OUT)/.built: $(SITE_STAMP) node_modules/.installed $(SITE_INPUTS) $(SITE_REPO_STAMP)
	$(SITE_VENV)/bin/python authoring/site/build.py --out $(SITE_OUT) $(if $(SITE_REPO),--repo $(SITE_REPO),)
	touch $(SITE_OUT)/.built

site: $(SITE_OUT)/.built

# The site's browser tests alone (`make test` runs them too): they build the site first if stale.
test-site: $(STAMP)
	$(PYTEST) -m "not slow" tests/test_site.py tests/test_site_exercises.py tests/test_site_access.py

# `make notebook NAME=10_layer_norm`: a new notebook's source, modules, tests and map rows (AUTHORING.md).
notebook:
	$(PYTHON) authoring/new_notebook.py "$(NAME)" --title "$(TITLE)" --summary "$(SUMMARY)"
