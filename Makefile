# tpush — developer entry points. The real build is CMake; this file only
# strings the steps together. See DEVELOPERS.md.
#
#   make [build]      configure build/ and compile tpush and its unit tests
#   make deps         install every Debian package building and testing need (as root)
#   make test         install what is missing, build, run the unit and integration tests
#   make test-asan    the same in build-asan/ under ASan + UBSan
#   make test-tsan    unit tests + TSAN_TESTS in build-tsan/ under ThreadSanitizer
#   make fuzz         libFuzzer targets (clang, build-fuzz/), FUZZ_SECONDS each
#   make fuzz-smoke   the same over the seed corpora, ~10 s each
#   make demo         install what is missing, build tpush, run scripts/demo.sh
#   make bench        bench/run.sh against build/tpush
#   make install      build tpush alone and install it (PREFIX=/usr/local, DESTDIR
#                     honoured); never runs apt
#   make deb          the Debian package (debian/, dpkg-buildpackage) in build-deb/,
#                     checked by lintian
#   make package-test (root) install the .deb on a clean Debian 12 root, use it, purge it
#   make fresh-test   (root) clone this repository into a fresh minimal Debian 12 root
#                     and run `make test` there (30-40 min; not in .ci/run)
#   make clean        remove build dirs; `make distclean` also removes .deps/
#
# Only deps, test, test-asan, test-tsan, fuzz, fuzz-smoke, demo, bench, deb,
# package-test and fresh-test install packages (as root); the others say what is
# missing. Knobs: WERROR=1 (on by default when $CI is set), BUILD_TYPE, PREFIX,
# DESTDIR, PYTEST_ARGS, PYTEST_JOBS, CMAKE_ARGS (extra configure arguments), TSAN_TESTS,
# FUZZ_SECONDS, FUZZ_TARGETS, FRESH_TEST_UNTIL.

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
LIBSSH2_DIR := $(CURDIR)/.deps/libssh2-1.11.1
# GCC 12 reports false -Wmaybe-uninitialized inside libstdc++ (std::regex,
# std::function) once -fsanitize is on, which -Werror turns into a failed CI
# build. The normal build keeps that warning. One flag, no spaces.
ASAN_CXXFLAGS ?= -Wno-maybe-uninitialized
# Debian's python3 with python3-pytest; root's `python3` may be a pyenv shim.
PYTHON      ?= /usr/bin/python3
PYTEST_ARGS ?=
# Integration test processes (pytest-xdist's -n; 0 runs them one at a time).
PYTEST_JOBS ?= $(shell echo $$(( $(NPROC) * 2 )))
CMAKE_ARGS  ?=

# Warnings are errors in CI (CI set to anything but 0/false) or with WERROR=1.
ci_on := $(filter-out 0 false False FALSE no,$(strip $(CI)))
ifeq ($(origin WERROR),undefined)
  WERROR := $(if $(ci_on),1,0)
endif
WERROR_ARG := -DTPUSH_WERROR=$(if $(filter 1 ON on yes true,$(WERROR)),ON,OFF)
# CI builds three trees from scratch on a small machine: the library and the unit
# tests compile as unity batches there (a third less compile time). Edit-compile
# loops keep one object per file; UNITY=ON/OFF chooses.
UNITY ?= $(if $(ci_on),ON,OFF)
BUILD_ARGS := -DBUILD_TESTING=ON -DCMAKE_UNITY_BUILD=$(UNITY)

# cmake --build runs its own make: keep it out of this make's jobserver.
NO_MAKE_ENV := env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL

ASAN_ENV := ASAN_OPTIONS=detect_leaks=1:abort_on_error=1:halt_on_error=1:strict_init_order=1:check_initialization_order=1 \
            UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1:abort_on_error=1 \
            LSAN_OPTIONS=report_objects=1:print_suppressions=0:suppressions=$(CURDIR)/tests/lsan.supp

.PHONY: all build deps test test-asan test-unit demo bench install clean distclean \
        check-build-deps check-dev-deps deps-test deps-bench libssh2 help

all: build

help:
	@sed -n '3,/^$$/{/^$$/!p}' $(firstword $(MAKEFILE_LIST)) | sed 's/^# \{0,1\}//'

# --- dependencies ----------------------------------------------------------------
deps:
	@scripts/install-deps.sh test
deps-test: deps
deps-bench:
	@scripts/install-deps.sh bench
check-build-deps:
	@scripts/install-deps.sh --check build
check-dev-deps:
	@scripts/install-deps.sh --check dev

# The static libssh2 1.11.1 (downloaded and built here, never by CMake's
# configure), unless pkg-config finds a system libssh2 >= 1.11, which CMake
# then uses.
libssh2: check-build-deps
	@if pkg-config --exists 'libssh2 >= 1.11' 2>/dev/null && [[ "$(CMAKE_ARGS)" != *TPUSH_SYSTEM_LIBSSH2=OFF* ]]; then \
	  :; else scripts/build-libssh2.sh '$(LIBSSH2_DIR)'; fi

# --- configure + compile -------------------------------------------------------------
# $(call cmake_build,DIR,EXTRA_CMAKE_ARGS[,TARGET])
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
	@$(NO_MAKE_ENV) cmake --build $(1) -j$(NPROC) $(if $(3),--target $(3))
endef

build: check-dev-deps libssh2
	$(call cmake_build,$(BUILD_DIR),$(BUILD_ARGS))

build-asan-dir: check-dev-deps libssh2
	$(call cmake_build,$(ASAN_DIR),$(BUILD_ARGS) -DTPUSH_SANITIZE=$(SANITIZE) -DCMAKE_CXX_FLAGS=$(ASAN_CXXFLAGS))
.PHONY: build-asan-dir

# --- tests ---------------------------------------------------------------------------
# $(call run_tests,BUILD_DIR,ENV[,PYTEST_PATHS]): the unit tests (one ctest test per
# doctest case, and the checks; ctest -j, its log in BUILD_DIR/unit-tests.log), then
# the integration suite (or only PYTEST_PATHS) in PYTEST_JOBS processes (pytest-xdist;
# each has its own farm). One after the other: each alone keeps both cores busy (on
# 2 cores, 2026-11-29: the unit tests 90 s at 186% CPU, the integration suite 561 s at
# 166%), and side by side they took as long (640 s) with every test's deadlines
# squeezed. pytest's "nothing collected" (exit 5) is a failure: a suite that silently
# ran nothing must not pass.
define run_tests
	@echo "== unit tests ($(1), log in $(1)/unit-tests.log)"
	@set +e; \
	$(2) ctest --test-dir $(1) --output-on-failure -j$(NPROC) > $(1)/unit-tests.log 2>&1; units=$$?; \
	if [[ $$units -ne 0 ]]; then cat $(1)/unit-tests.log; else tail -n 3 $(1)/unit-tests.log; fi; \
	echo "== integration tests ($(1)/tpush)"; \
	$(2) TPUSH_BIN='$(CURDIR)/$(1)/tpush' PYTHONDONTWRITEBYTECODE=1 \
	  $(PYTHON) -m pytest -q -p no:cacheprovider -n $(PYTEST_JOBS) --dist loadgroup --durations=15 \
	  $(or $(3),tests/integration) $(PYTEST_ARGS); integration=$$?; \
	[[ $$units -eq 0 && $$integration -eq 0 ]]
endef

test: deps build
	$(call run_tests,$(BUILD_DIR),)

test-asan: deps build-asan-dir
	$(call run_tests,$(ASAN_DIR),$(ASAN_ENV))

# ThreadSanitizer: every unit test, and the integration tests that drive the event
# loop, the writer thread, the name-lookup threads and signals together, and a
# persist master serving run after run (the whole suite is too slow under TSan on a
# small machine). tests/tsan.supp: third-party only.
TSAN_DIR   ?= build-tsan
TSAN_TESTS ?= tests/integration/test_basic.py tests/integration/test_control.py tests/integration/test_persist.py \
              tests/integration/test_output_modes.py tests/integration/test_names.py \
              tests/integration/test_agent_forwarding.py
TSAN_ENV   := TSAN_OPTIONS=halt_on_error=1:abort_on_error=1:second_deadlock_stack=1:suppressions=$(CURDIR)/tests/tsan.supp
build-tsan-dir: check-dev-deps libssh2
	$(call cmake_build,$(TSAN_DIR),$(BUILD_ARGS) -DTPUSH_SANITIZE=thread -DCMAKE_CXX_FLAGS=$(ASAN_CXXFLAGS))
test-tsan: deps build-tsan-dir
	$(call run_tests,$(TSAN_DIR),$(TSAN_ENV),$(TSAN_TESTS))
.PHONY: build-tsan-dir test-tsan

# --- fuzzing -------------------------------------------------------------------------
# libFuzzer targets (tests/fuzz, cmake/Fuzz.cmake), built with clang in build-fuzz/ under
# ASan + UBSan. `fuzz`: each target FUZZ_SECONDS from a copy of its seed corpus (kept in
# build-fuzz/fuzz-corpus/); `fuzz-smoke`: each seed corpus, then FUZZ_SMOKE_SECONDS in
# all. A crash, leak, hang or broken invariant fails either (tests/fuzz/run.sh).
FUZZ_DIR           ?= build-fuzz
FUZZ_SECONDS       ?= 60
FUZZ_SMOKE_SECONDS ?= 10
FUZZ_TARGETS       ?=
deps-fuzz:
	@scripts/install-deps.sh fuzz
build-fuzz-dir: deps-fuzz libssh2
	$(call cmake_build,$(FUZZ_DIR),-DTPUSH_FUZZ=ON -DBUILD_TESTING=OFF -DTPUSH_WERROR=OFF -DCMAKE_C_COMPILER=clang-14 -DCMAKE_CXX_COMPILER=clang++-14,fuzz_targets)
fuzz: build-fuzz-dir
	@tests/fuzz/run.sh $(FUZZ_DIR) $(FUZZ_SECONDS) $(FUZZ_TARGETS)
fuzz-smoke: build-fuzz-dir
	@tests/fuzz/run.sh --smoke $(FUZZ_DIR) $(FUZZ_SMOKE_SECONDS) $(FUZZ_TARGETS)
.PHONY: deps-fuzz build-fuzz-dir fuzz fuzz-smoke

# Unit tests only, no package check (quick edit-compile-test loop).
test-unit:
	$(call cmake_build,$(BUILD_DIR),$(BUILD_ARGS))
	@ctest --test-dir $(BUILD_DIR) --output-on-failure -j$(NPROC)

# --- demo / bench --------------------------------------------------------------------
demo: deps libssh2
	$(call cmake_build,$(BUILD_DIR),$(BUILD_ARGS),tpush)
	TPUSH_BIN='$(CURDIR)/$(BUILD_DIR)/tpush' bash scripts/demo.sh

bench: deps-bench build
	TPUSH_BIN='$(CURDIR)/$(BUILD_DIR)/tpush' bash bench/run.sh

# --- soak ----------------------------------------------------------------------------
# Chaos soak (tests/soak/README.md): SOAK_WORKERS workers, SOAK_ROUNDS rounds of streamed
# output while session sshds are killed and frozen, connections reset or dropped
# (nftables) and one sshd restarted. Root only. `soak-smoke`: 64 workers, 3 rounds
# (~2 min), for CI. SOAK_SEED replays a run, SOAK_ARGS adds soak.py options, SOAK_TPUSH
# tests another binary. Never runs apt: the `test` packages must be there (make deps).
SOAK_WORKERS ?= 512
SOAK_ROUNDS  ?= 20
SOAK_SEED    ?=
SOAK_ARGS    ?=
SOAK_TPUSH   ?= $(CURDIR)/$(BUILD_DIR)/tpush
soak-check:
	@if [[ $$(id -u) -ne 0 ]]; then \
	  echo "make soak: needs root (nftables rules, signals to sshd session processes): sudo make soak" >&2; \
	  exit 2; fi
	@scripts/install-deps.sh --check test
soak: soak-check build
	TPUSH_BIN='$(SOAK_TPUSH)' $(PYTHON) tests/soak/soak.py --workers $(SOAK_WORKERS) \
	  --rounds $(SOAK_ROUNDS) $(if $(SOAK_SEED),--seed $(SOAK_SEED)) $(SOAK_ARGS)
soak-smoke: soak-check build
	TPUSH_BIN='$(SOAK_TPUSH)' $(PYTHON) tests/soak/soak.py --workers 64 --rounds 3 \
	  $(if $(SOAK_SEED),--seed $(SOAK_SEED)) $(SOAK_ARGS)
.PHONY: soak-check soak soak-smoke

# --- Debian package ------------------------------------------------------------------
# debian/ built with dpkg-buildpackage and debhelper (README.md, "Packaging"). CMake
# builds in build-deb/cmake, incrementally (-nc: no pre-clean; the build stamp goes so
# dh builds again); the packages land in build-deb/. The version is the project's
# (CMakeLists.txt), and debian/changelog must carry it. lintian then fails the target
# on any error or warning (debian/tpush.lintian-overrides says why for what is left);
# as root it runs as nobody (it unpacks the package, and warns when run as root).
DEB_DIR       := build-deb
DEB_JOBS      ?= $(NPROC)
DEB_LEFTOVERS := debian/.debhelper debian/debhelper-build-stamp debian/files \
                 debian/*.substvars debian/*.debhelper.log debian/tpush debian/tpush-dbgsym debian/tmp
PROJECT_VERSION = $(shell sed -nE 's/^project\(tpush VERSION ([^ )]+).*/\1/p' CMakeLists.txt)
DEB_ARCH        = $(shell dpkg --print-architecture)
DEB_FILE        = $(DEB_DIR)/tpush_$(PROJECT_VERSION)_$(DEB_ARCH).deb
deps-package:
	@scripts/install-deps.sh package
deb: deps-package libssh2
	@v='$(PROJECT_VERSION)'; d=$$(dpkg-parsechangelog -S Version); \
	if [[ -z "$$v" || "$$d" != "$$v" ]]; then \
	  echo "make deb: debian/changelog is at '$$d' but CMakeLists.txt says '$$v':" \
	       "add a changelog entry first (dch -v $$v)" >&2; exit 1; fi
	@mkdir -p $(DEB_DIR)
	@rm -f debian/debhelper-build-stamp
	@base='$(DEB_DIR)/tpush_$(PROJECT_VERSION)_$(DEB_ARCH)'; \
	$(NO_MAKE_ENV) dpkg-buildpackage --build=binary --no-pre-clean --no-sign --jobs-try=$(DEB_JOBS) \
	  --buildinfo-file=$$base.buildinfo --buildinfo-option=-u$(DEB_DIR) \
	  --changes-file=$$base.changes --changes-option=-u$(DEB_DIR)
	@echo "== lintian $(DEB_FILE)"
	@$(if $(filter 0,$(shell id -u)),setpriv --reuid=nobody --regid=nogroup --clear-groups env HOME=/tmp) \
	  lintian --fail-on error,warning --display-info $(DEB_FILE)
	@echo "make deb: $(DEB_FILE)"

# Root only: debootstrap, chroot and mounts. The clean root is cached in
# /var/cache/tpush/package-test/ (tests/package/install-test.sh says how it is keyed).
package-test-check:
	@if [[ $$(id -u) -ne 0 ]]; then \
	  echo "make package-test: needs root (debootstrap, chroot, mounts): sudo make package-test" >&2; \
	  exit 2; fi
package-test: package-test-check deb
	@tests/package/install-test.sh $(DEB_FILE)
.PHONY: deps-package deb package-test-check package-test

# Root only: `make test` from a clone of this repository's HEAD, as README.md says
# it, on a fresh `debootstrap --variant=minbase bookworm` root (cached in
# /var/cache/tpush/fresh-test/); tests/package/fresh-test.sh says how.
# FRESH_TEST_UNTIL=clone, deps or libssh2 stops after that step (clone, deps: no compile).
FRESH_TEST_UNTIL ?=
deps-fresh:
	@scripts/install-deps.sh fresh
fresh-test: deps-fresh
	@tests/package/fresh-test.sh $(if $(FRESH_TEST_UNTIL),--until $(FRESH_TEST_UNTIL))
.PHONY: deps-fresh fresh-test

# --- install / clean -------------------------------------------------------------------
# Builds only the tpush target; a build directory made here has no unit tests
# (no doctest needed). Never runs apt.
install: check-build-deps libssh2
	@if [[ ! -f $(BUILD_DIR)/CMakeCache.txt ]]; then \
	  args='-DCMAKE_BUILD_TYPE=$(BUILD_TYPE) $(WERROR_ARG) -DBUILD_TESTING=OFF $(CMAKE_ARGS)'; \
	  echo "cmake -S . -B $(BUILD_DIR) $$args"; \
	  $(NO_MAKE_ENV) cmake -S . -B $(BUILD_DIR) $$args; \
	  printf '%s\n' "$$args" > $(BUILD_DIR)/.tpush-configure-args; \
	fi
	@$(NO_MAKE_ENV) cmake --build $(BUILD_DIR) -j$(NPROC) --target tpush
	DESTDIR='$(DESTDIR)' cmake --install $(BUILD_DIR) --prefix '$(PREFIX)'

clean:
	rm -rf -- $(BUILD_DIR) $(ASAN_DIR) $(TSAN_DIR) $(FUZZ_DIR) $(DEB_DIR) $(DEB_LEFTOVERS)

distclean: clean
	rm -rf -- .deps
