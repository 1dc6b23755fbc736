# Two commands take a fresh machine (Python 3.11+) to a running demo or a passing suite.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
# Where `make demo` serves: `make demo PORT=8001`, or HOST=0.0.0.0 with ALLOWED_HOSTS for other machines.
HOST ?= 127.0.0.1
PORT ?= 8000
export DEBUG ?= true

.PHONY: demo test install system-deps lint bench clean editor-bundle editor-bundle-check

$(VENV)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -e ".[dev]"
	touch $@

# A development checkout's defaults, read by the settings (a variable in the environment wins), so
# `manage.py ...` and `pytest` work without make. Written once, never over your edits.
.env:
	printf '# Development defaults (written by make install; the environment wins).\nDEBUG=true\n' > $@

# The ext-apps App SDK that app screens import (served at /_lcp/ext-apps/...): from npm, digest-checked.
EXT_APPS_SDK := lowcode_platform/vendor/ext-apps-2.0.4/app-with-deps.js
$(EXT_APPS_SDK): .ci/fetch-ext-apps
	bash .ci/fetch-ext-apps
	touch $@

install: $(VENV)/.installed .env $(EXT_APPS_SDK)

# bubblewrap, for the sandbox's strongest tier; the isolation tests require it (apt, as root or sudo).
system-deps:
	bash .ci/install-system-deps

# The sandbox probe prints the isolation tier the demo gets (the strongest this host supports; nothing
# forces one). Tier 3 lets handlers reach services on loopback, so the demo refuses it unless named:
# `make demo SANDBOX_MIN_TIER=3` on a host without bubblewrap or Landlock (a loud warning then).
demo: install
	$(PY) manage.py migrate --noinput
	$(PY) -m apps_runtime.sandbox --bundle-root $${PLATFORM_VAR_DIR:-var}/bundles --min-tier $${SANDBOX_MIN_TIER:-2} \
		|| { echo "No isolation tier 1 or 2 on this host: install bubblewrap, or accept tier 3 with make demo SANDBOX_MIN_TIER=3"; exit 1; }
	$(PY) manage.py seed_demo --base-url http://$(HOST):$(PORT)
	@# The helpdesk's service_status tool calls a loopback status page; only its address is allowed.
	$(PY) fixtures/status_page/serve.py --port 8765 & status_page=$$!; trap "kill $$status_page" EXIT; \
		EGRESS_ALLOWED_NETWORKS=127.0.0.1/32 $(PY) manage.py serve --host $(HOST) --port $(PORT)

# In parallel (pytest-xdist): two workers per core, as most tests wait on a server, a subprocess or the
# database rather than compute. Each worker gets its own test database (pytest-django adds _gw<N>), and
# tests sharing Redis use keys and queues of their own. --dist loadscope keeps a module on one worker,
# so a module's served platform or browser starts once, in the order tests/conftest.py sets (the slow
# modules first, not xdist's by-count reorder). `make test PYTEST_WORKERS=0` runs serially.
PYTEST_WORKERS ?= $(shell echo $$(( $$(nproc) * 2 )))
test: install system-deps
	$(PY) -m pytest -n $(PYTEST_WORKERS) --dist loadscope --no-loadscope-reorder $(PYTEST_ARGS)

# The type checker (mypy, configured in pyproject.toml; its Django plugin loads the settings) and the
# dependency check: the platform's imports against its dependencies, then the tests' against those
# and the dev extra (tenant bundles under tests/ import the handler SDK, which the sandbox provides).
# The manual (docs/, mkdocs.yml) is built strict, so a broken link or anchor fails, into a
# temporary folder, never into the checkout.
# The console editor's CodeMirror 6 bundle, rebuilt from console/code_editor/package-lock.json (Node 22
# and the pinned packages from npm); the check rebuilds it and compares with the committed one.
editor-bundle:
	bash .ci/build-editor

editor-bundle-check:
	bash .ci/build-editor --check

lint: install
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
	$(VENV)/bin/lint-imports
	$(VENV)/bin/mypy
	$(VENV)/bin/deptry .
	$(VENV)/bin/deptry . --exclude '\.venv|bench|examples|fixtures|var|app_templates/files|tests/.*/apps/' --ignore DEP002,DEP004
	site=$$(mktemp -d) && NO_MKDOCS_2_WARNING=1 $(VENV)/bin/mkdocs build --strict --site-dir "$$site"; \
		status=$$?; rm -rf "$$site"; exit $$status

bench: install
	$(PY) bench/run_all.py

clean:
	rm -rf $(VENV) var .pytest_cache
