# tpush — developer entry points. The real build is CMake; this file only
# strings the steps together. See DEVELOPERS.md.
#
#   make [build]      install build deps, configure build/ and compile
#   make test         unit tests (ctest) + integration suite (pytest)
#   make test-asan    the same in build-asan/ under ASan + UBSan
#   make demo         scripts/demo.sh against build/tpush
#   make bench        bench/run.sh against build/tpush
#   make install      cmake --install build (PREFIX=/usr/local, DESTDIR honoured)
#   make clean        remove build dirs; `make distclean` also removes .deps/
#
# Knobs: WERROR=1 (on by default when $CI is set), BUILD_TYPE, PREFIX, DESTDIR,
# PYTEST_ARGS, CMAKE_ARGS (extra configure arguments).

SHELL := /bin/bash
.SHELLFLAGS := -euo pipefail -c
.DEFAULT_GOAL := all
# Top-level steps share build directories and apt: run them one at a time.
.NOTPARALLEL:
.SUFFIXES:

comma := ,
NPROC       := $(shell nproc 2>/dev/null || echo 2)
BUILD_DIR   ?= build
ASAN_DIR    ?= build-asan
BUILD_TYPE  ?= RelWithDebInfo
PREFIX      ?= /usr/local
DESTDIR     ?=
SANITIZE    ?= address$(comma)undefined
# GCC 12 reports false -Wmaybe-uninitialized inside libstdc++ (std::regex,
# std::function) once -fsanitize is on, which -Werror turns into a failed CI
# build. The normal build keeps that warning. One flag, no spaces.
ASAN_CXXFLAGS ?= -Wno-maybe-uninitialized
# Debian's python3 with python3-pytest; root's `python3` may be a pyenv shim.
PYTHON      ?= /usr/bin/python3
PYTEST_ARGS ?=
CMAKE_ARGS  ?=

# Warnings are errors in CI (CI set to anything but 0/false) or with WERROR=1.
ci_on := $(filter-out 0 false False FALSE no,$(strip $(CI)))
ifeq ($(origin WERROR),undefined)
  WERROR := $(if $(ci_on),1,0)
endif
WERROR_ARG := -DTPUSH_WERROR=$(if $(filter 1 ON on yes true,$(WERROR)),ON,OFF)

# cmake --build runs its own make: keep it out of this make's jobserver.
NO_MAKE_ENV := env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL

ASAN_ENV := ASAN_OPTIONS=detect_leaks=1:abort_on_error=1:halt_on_error=1:strict_init_order=1:check_initialization_order=1 \
            UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1:abort_on_error=1 \
            LSAN_OPTIONS=report_objects=1:print_suppressions=0:suppressions=$(CURDIR)/tests/lsan.supp

.PHONY: all build test test-asan test-unit demo bench install clean distclean \
        deps-build deps-test deps-bench libssh2 help

all: build

help:
	@sed -n '3,14p' $(firstword $(MAKEFILE_LIST)) | sed 's/^# \{0,1\}//'

# --- dependencies ----------------------------------------------------------------
deps-build:
	@scripts/install-deps.sh build
deps-test:
	@scripts/install-deps.sh test
deps-bench:
	@scripts/install-deps.sh bench

# Build (or reuse) the static libssh2 1.11.1 that CMake configure would build.
libssh2: deps-build
	@scripts/build-libssh2.sh .deps/libssh2-1.11.1

# --- configure + compile -------------------------------------------------------------
# $(call cmake_build,DIR,EXTRA_CMAKE_ARGS)
# Configures only when DIR has no cache or the arguments changed since the last
# successful configure (CMake re-configures by itself when CMakeLists change).
define cmake_build
	@args='-DCMAKE_BUILD_TYPE=$(BUILD_TYPE) $(WERROR_ARG) $(2) $(CMAKE_ARGS)'; \
	if [[ ! -f $(1)/CMakeCache.txt || "$$(cat $(1)/.tpush-configure-args 2>/dev/null)" != "$$args" ]]; then \
	  echo "cmake -S . -B $(1) $$args"; \
	  rm -f $(1)/.tpush-configure-args; \
	  $(NO_MAKE_ENV) cmake -S . -B $(1) $$args; \
	  printf '%s\n' "$$args" > $(1)/.tpush-configure-args; \
	fi
	@$(NO_MAKE_ENV) cmake --build $(1) -j$(NPROC)
endef

build: deps-build
	$(call cmake_build,$(BUILD_DIR),)

build-asan-dir: deps-build
	$(call cmake_build,$(ASAN_DIR),-DTPUSH_SANITIZE=$(SANITIZE) -DCMAKE_CXX_FLAGS=$(ASAN_CXXFLAGS))
.PHONY: build-asan-dir

# --- tests ---------------------------------------------------------------------------
# $(call run_tests,BUILD_DIR,ENV)
define run_tests
	@echo "== unit tests ($(1))"
	@$(2) ctest --test-dir $(1) --output-on-failure
	@echo "== integration tests ($(1)/tpush)"
	@if ! compgen -G 'tests/integration/test_*.py' >/dev/null && \
	    ! compgen -G 'tests/integration/*_test.py' >/dev/null && \
	    ! compgen -G 'tests/integration/*/test_*.py' >/dev/null; then \
	  echo "note: tests/integration has no test files yet; skipping the integration suite"; \
	else \
	  rc=0; \
	  $(2) TPUSH_BIN='$(CURDIR)/$(1)/tpush' PYTHONDONTWRITEBYTECODE=1 \
	    $(PYTHON) -m pytest -q -p no:cacheprovider tests/integration $(PYTEST_ARGS) || rc=$$?; \
	  if [[ $$rc -eq 5 ]]; then echo "note: pytest collected no integration tests; skipping"; \
	  elif [[ $$rc -ne 0 ]]; then exit $$rc; fi; \
	fi
endef

test: deps-test build
	$(call run_tests,$(BUILD_DIR),)

test-asan: deps-test build-asan-dir
	$(call run_tests,$(ASAN_DIR),$(ASAN_ENV))

# Unit tests only, no deps check (quick edit-compile-test loop).
test-unit:
	$(call cmake_build,$(BUILD_DIR),)
	@ctest --test-dir $(BUILD_DIR) --output-on-failure

# --- demo / bench --------------------------------------------------------------------
demo: deps-test build
	@if [[ ! -f scripts/demo.sh ]]; then \
	  echo "make: scripts/demo.sh does not exist yet; nothing to demo" >&2; exit 1; fi
	TPUSH_BIN='$(CURDIR)/$(BUILD_DIR)/tpush' bash scripts/demo.sh

bench: deps-bench build
	@if [[ ! -f bench/run.sh ]]; then \
	  echo "make: bench/run.sh does not exist yet; no benchmark to run" >&2; exit 1; fi
	TPUSH_BIN='$(CURDIR)/$(BUILD_DIR)/tpush' bash bench/run.sh

# --- install / clean -------------------------------------------------------------------
install: build
	DESTDIR='$(DESTDIR)' cmake --install $(BUILD_DIR) --prefix '$(PREFIX)'

clean:
	rm -rf -- $(BUILD_DIR) $(ASAN_DIR)

distclean: clean
	rm -rf -- .deps
