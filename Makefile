# Two commands set everything up on a fresh machine: `make demo` and `make test`.
# Both create .venv on first use and reinstall when pyproject.toml changes.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
# Python caches each module's bytecode beside it. An environment that turns that off
# (PYTHONDONTWRITEBYTECODE, set on some CI machines) makes every process the suite and the
# grader start compile the course's packages again: kernels, workers, nbgrader, servers.
unexport PYTHONDONTWRITEBYTECODE

.PHONY: demo test soak docs screenshots parity bench clean student-bundle lab hub

$(STAMP): pyproject.toml
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	$(BIN)/python -m pip install -q -e '.[dev,docs]'
	@# The PyTorch parity tests need torch==2.13.0 (a CPU build that installs from
	@# local disk here); where it cannot be installed they skip with a printed reason.
	$(BIN)/python -m pip install -q -e '.[dev,docs,parity]' \
	  || echo "NOTE: torch==2.13.0 not installable here; PyTorch parity tests will be skipped."
	@touch $(STAMP)

# The whole instructor job on a scratch course in build/demo: generate every unit, grade a
# made-up class in parallel, feedback, grades.csv, the class report, and a grade table.
# (`python -m minitorch_ref.demo` still trains a network with the reference.)
demo: $(STAMP)
	PATH="$(CURDIR)/$(BIN):$$PATH" $(BIN)/python -m autograder demo --out build/demo

# The instructor's JupyterLab at the course root: Formgrader (it runs .venv/bin/alembic, so the
# venv's bin goes on PATH), the Assignments tab, Validate. The exchange: see nbgrader_config.py.
# hub/instructor/ (as on the hub) makes the server send a script policy
# (autograder/pipeline/term/csp.py).
lab: $(STAMP)
	PATH="$(CURDIR)/$(BIN):$$PATH" JUPYTER_CONFIG_PATH="$(CURDIR)/hub/instructor" \
	  $(BIN)/jupyter lab --notebook-dir="$(CURDIR)" $(LAB_FLAGS)

# The course's JupyterHub on http://localhost:8000 (hub/jupyterhub_config.py), as root on Linux:
# each user's server on a host of its own (alice.localhost), each student's in a sandbox of its own, run from the student environment, which is
# built here from the student bundle into build/hub/student-env; passwords in
# hub/state/logins.csv (root only). Its proxy, configurable-http-proxy, comes from npm into
# hub/node_modules (git-ignored).
PROXY := hub/node_modules/.bin/configurable-http-proxy
STUDENT_ENV := build/hub/student-env

$(PROXY): hub/package.json hub/package-lock.json
	cd hub && npm ci --no-audit --no-fund
	@touch $(PROXY)

hub: $(STAMP) $(PROXY)
	$(BIN)/python -m autograder.hub.student_env $(STUDENT_ENV)
	PATH="$(CURDIR)/$(BIN):$$PATH" $(BIN)/python -m autograder.hub -f hub/jupyterhub_config.py

# What students get: the release notebooks of the units schedule.toml has opened (or
# BUNDLE_FLAGS="--units 01_setup 02_gradients"), the `course` wheel, requirements.txt.
student-bundle: $(STAMP)
	$(BIN)/python -m autograder bundle --out build/student-bundle $(BUNDLE_FLAGS)

# The hub's browser test needs the proxy: without npm it skips (under CI=true it fails).
# Three pytest-xdist workers on two cores, given whole files of tests (tests/workers.py): a
# third worker's tests use the cores while others wait (a job's time budget, a server being
# culled, a page loading). The ten slowest tests are listed at the end.
test: $(STAMP)
	@if command -v npm >/dev/null; then $(MAKE) --no-print-directory $(PROXY); \
	  else echo "NOTE: npm is missing; the JupyterHub test will be skipped."; fi
	$(BIN)/python -m pytest -n 3 --dist loadfile --no-loadscope-reorder --durations=10

# The soak tests with their full repetitions (the suite runs each a few times: tests/soak.py).
soak: $(STAMP)
	$(BIN)/python -m pytest -m soak --soak

# The documentation site (docs/, Sphinx with MyST Markdown) in build/docs/html: warnings are
# errors and every internal reference must resolve (tests/test_docs.py builds it the same way).
# The diagram needs graphviz's `dot` (Debian's graphviz). Nothing is fetched from the network.
docs: $(STAMP)
	$(BIN)/sphinx-build -b html -W --keep-going -n -q docs build/docs/html
	@echo "The site: build/docs/html/index.html"

# The site's pictures of Formgrader, the Assignments tab, Validate, feedback, the class report and
# the Playground are taken by the browser tests themselves: with MINITORCH_SCREENSHOTS set they
# save them into docs/img/screens/ (committed; rerun after a change to what they show). CI=true:
# a test that cannot run fails instead of skipping, so no picture is silently left stale.
screenshots: $(STAMP) $(PROXY)
	CI=true MINITORCH_SCREENSHOTS="$(CURDIR)/docs/img/screens" $(BIN)/python -m pytest \
	  tests/course/test_browser.py tests/pipeline/test_hub.py tests/pipeline/test_inert_pages.py \
	  -k "playground or term_through_the_hub or reflection_is_graded_by_hand or no_grade_moved"

parity: $(STAMP)
	$(BIN)/python -m pytest tests/minitorch_ref/parity -v

# Ratios measured in one run (see bench/README.md); PyTorch's column needs the parity extra.
bench: $(STAMP)
	$(BIN)/python -m bench.mlp
	$(BIN)/python -m bench.tiny
	$(BIN)/python -m bench.conv
	$(BIN)/python -m bench.lm
	$(BIN)/python -m bench.transformer
	$(BIN)/python -m bench.gpt
	$(BIN)/python -m bench.gpt_runs
	$(BIN)/python -m bench.notebooks
	$(BIN)/python -m bench.headless
	PATH="$(CURDIR)/$(BIN):$$PATH" $(BIN)/python bench/autograde.py

clean:
	rm -rf $(VENV) build *.egg-info .pytest_cache .hypothesis hub/node_modules
